package store

import (
	"context"
	"sync"
)

// CloseGuard keeps a backend's operations and its Close apart: an operation
// enters the guard and leaves it when done; Close waits for the operations in
// flight, releases the backend once, and makes every later Enter fail with
// ErrClosed. Its zero value is an open guard. Backends embed one (pebblestore,
// sqlstore) instead of each keeping a lock and a flag of their own.
type CloseGuard struct {
	mu     sync.RWMutex
	closed bool
}

// Enter admits an operation: it answers ctx's error when ctx is done and
// ErrClosed after Close; otherwise the operation is in, and must call Leave
// when it is done.
func (g *CloseGuard) Enter(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	g.mu.RLock()
	if g.closed {
		g.mu.RUnlock()
		return ErrClosed
	}
	return nil
}

// Leave ends an operation that Enter admitted.
func (g *CloseGuard) Leave() { g.mu.RUnlock() }

// Close waits for the operations in flight, then runs release (which frees
// the backend's resources) once; later calls run nothing and answer nil.
func (g *CloseGuard) Close(release func() error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed {
		return nil
	}
	g.closed = true
	return release()
}
