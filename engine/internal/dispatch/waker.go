package dispatch

import (
	"context"
	"sync"
	"time"
)

// Waker wakes the long polls of a queue when it gains ready tasks, the
// event watches of a run when its log grows, and those who await a run's end
// when it ends. This process's commits wake it
// directly (Dispatcher.Settle); other processes' reach it through a
// Publisher on their side and Dispatcher.Wake on this one, and waiters also
// look at the store on an interval, so a lost wake-up costs latency, never
// correctness.
type Waker struct {
	mu sync.Mutex
	ch map[string]*waiting
}

// waiting is the channel of one key and how many callers hold it.
type waiting struct {
	c       chan struct{}
	holders int
}

// QueueKey names a tenant's queue in the waker.
func QueueKey(tenant, queue string) string { return tenant + "\x00" + queue }

// RunKey names a run's log in the waker (never a queue: queue keys hold a
// NUL).
func RunKey(runID string) string { return runKeyPrefix + runID }

// runKeyPrefix begins every RunKey.
const runKeyPrefix = "run\x01"

// RunEndKey names a run's end in the waker: it is woken when a commit of this
// process leaves the run terminal, and by every wake-up of the run's log
// from another process (which does not say whether the run ended).
func RunEndKey(runID string) string { return "end\x01" + runID }

// Wait answers a channel closed at key's next Notify, and a release the
// caller calls once it no longer waits on it: a key no caller holds is
// forgotten, so the runs and queues waited on once do not pile up here.
func (w *Waker) Wait(key string) (<-chan struct{}, func()) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ch == nil {
		w.ch = map[string]*waiting{}
	}
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
func (w *Waker) release(key string, wt *waiting) {
	w.mu.Lock()
	defer w.mu.Unlock()
	wt.holders--
	if wt.holders == 0 && w.ch[key] == wt {
		delete(w.ch, key)
	}
}

// Notify wakes every caller waiting on key.
func (w *Waker) Notify(key string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if wt, ok := w.ch[key]; ok {
		close(wt.c)
		delete(w.ch, key)
	}
}

// Waiting reports whether a caller waits on key.
func (w *Waker) Waiting(key string) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, ok := w.ch[key]
	return ok
}

// Keys answers how many keys have a waiting caller.
func (w *Waker) Keys() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.ch)
}

// Await looks, then waits for key's wake-up, and looks again, until a look
// answers that it is done. look answers how long to wait at most before the
// next look; zero or less ends the wait. Await answers look's error, or the
// context's when ctx ends first. The wake-up is taken before each look, so an
// append between the look and the wait ends the wait at once.
func (w *Waker) Await(ctx context.Context, key string, look func() (time.Duration, error)) error {
	for {
		woken, release := w.Wait(key)
		d, err := look()
		if err != nil || d <= 0 {
			release()
			return err
		}
		err = waitUntil(ctx, woken, d)
		release()
		if err != nil {
			return err
		}
	}
}

// waitUntil waits until woken closes or d passes; it answers ctx's error if
// ctx ends first.
func waitUntil(ctx context.Context, woken <-chan struct{}, d time.Duration) error {
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-woken:
	case <-timer.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}
