package engine

import "sync"

// waker wakes the long polls of a queue when it gains ready tasks, and the
// event watches of a run when its log grows. This process's commits wake it
// directly; other processes' reach it through a Notifier (Engine.Wake), and
// waiters also look at the store on an interval, so a lost wake-up costs
// latency, never correctness.
type waker struct {
	mu sync.Mutex
	ch map[string]*waiting
	// handOffs are the long polls waiting here, to which a decision may
	// hand a task it makes ready (handoff.go).
	handOffs *handOffs
}

// waiting is the channel of one key and how many callers hold it.
type waiting struct {
	c       chan struct{}
	holders int
}

func newWaker() *waker { return &waker{ch: map[string]*waiting{}, handOffs: newHandOffs()} }

// wait answers a channel closed at key's next notify, and a release the
// caller calls once it no longer waits on it: a key no caller holds is
// forgotten, so the runs and queues waited on once do not pile up here.
func (w *waker) wait(key string) (<-chan struct{}, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt, ok := w.ch[key]
	if !ok {
		wt = &waiting{c: make(chan struct{})}
		w.ch[key] = wt
	}
	wt.holders++
	var once sync.Once
	return wt.c, func() { once.Do(func() { w.release(key, wt) }) }
}

// release drops one holder of wt, and wt itself with its last holder, unless
// a notify already closed it.
func (w *waker) release(key string, wt *waiting) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt.holders--
	if wt.holders == 0 && w.ch[key] == wt {
		delete(w.ch, key)
	}
}

// notify wakes every caller waiting on key.
func (w *waker) notify(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wt, ok := w.ch[key]; ok {
		close(wt.c)
		delete(w.ch, key)
	}
}

// Notifier carries wake-ups to the other engines that share this engine's
// store (the cluster deployment; wake/rediswake is the Redis one). After each
// commit the engine hands it the keys the decision woke: the queues that
// gained ready tasks and the run whose log grew. The keys are opaque strings
// that only Engine.Wake interprets; they name queues and runs, never carry a
// payload. The receiving side hands them to its engine's Wake.
type Notifier interface {
	// Publish is called on the decision's path, after its commit: it must
	// return at once and never wait on the network, and it may drop keys
	// (wake-ups are hints). It must not keep keys after it returns.
	Publish(keys []string)
}

// Wake wakes this engine's long polls and event watches waiting on keys, as
// another engine's Notifier published them. Keys that nothing here waits on,
// or that this engine never publishes, are ignored.
func (e *Engine) Wake(keys ...string) {
	for _, k := range keys {
		e.wake.notify(k)
	}
}

// publishWakes hands the keys a committed decision woke to the Notifier.
func (e *Engine) publishWakes(ch *change) {
	if e.cfg.Notifier == nil || (len(ch.wake) == 0 && len(ch.events) == 0) {
		return
	}
	keys := make([]string, 0, len(ch.wake)+1)
	keys = append(keys, ch.wake...)
	if len(ch.events) > 0 {
		keys = append(keys, runWatchKey(ch.run.RunID))
	}
	e.cfg.Notifier.Publish(keys)
}
