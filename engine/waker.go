package engine

import "sync"

// waker wakes long polls on a queue when a task becomes ready in this
// process; polls also look at the store on an interval for other processes.
type waker struct {
	mu sync.Mutex
	ch map[string]chan struct{}
}

func newWaker() *waker { return &waker{ch: map[string]chan struct{}{}} }

// wait answers a channel closed at the queue's next notify.
func (w *waker) wait(queue string) <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	c, ok := w.ch[queue]
	if !ok {
		c = make(chan struct{})
		w.ch[queue] = c
	}
	return c
}

// notify wakes every poll waiting on queue.
func (w *waker) notify(queue string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if c, ok := w.ch[queue]; ok {
		close(c)
		delete(w.ch, queue)
	}
}
