package dispatch

import "sync"

// Recent keeps values for recently used keys, bounded: it holds two
// generations of at most size entries each, and when the current one fills,
// the older is dropped whole — its map emptied and taken as the next current
// one, so that a full cache turns over without allocating. A key found only in
// the older generation is moved to the current one, so what is used stays.
// Safe for concurrent use.
//
// It is a cache of what the store holds, never a source of truth: every
// caller validates what it takes (a checkpoint by its version; a run record
// is immutable; a task record by the version its commit is conditioned on).
type Recent[V any] struct {
	mu       sync.Mutex
	size     int
	cur, old map[string]V
}

// NewRecent answers a cache of at most size entries per generation.
func NewRecent[V any](size int) *Recent[V] {
	return &Recent[V]{size: size, cur: make(map[string]V, size)}
}

// Get answers the value held for key.
func (c *Recent[V]) Get(key string) (V, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if v, ok := c.cur[key]; ok {
		return v, true
	}
	v, ok := c.old[key]
	if ok {
		delete(c.old, key)
		c.putLocked(key, v)
	}
	return v, ok
}

// Put holds v for key.
func (c *Recent[V]) Put(key string, v V) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.old, key)
	c.putLocked(key, v)
}

// PutUnless puts v unless the entry held for key is one to keep.
func (c *Recent[V]) PutUnless(key string, v V, keep func(held V) bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if held, ok := c.cur[key]; ok && keep(held) {
		return
	}
	if held, ok := c.old[key]; ok && keep(held) {
		return
	}
	delete(c.old, key)
	c.putLocked(key, v)
}

func (c *Recent[V]) putLocked(key string, v V) {
	if _, ok := c.cur[key]; !ok && len(c.cur) >= c.size {
		dropped := c.old
		if dropped == nil {
			dropped = make(map[string]V, c.size)
		}
		clear(dropped)
		c.old, c.cur = c.cur, dropped
	}
	c.cur[key] = v
}

// Remove forgets key.
func (c *Recent[V]) Remove(key string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	delete(c.cur, key)
	delete(c.old, key)
}

// Len answers how many entries are held (both generations).
func (c *Recent[V]) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur) + len(c.old)
}
