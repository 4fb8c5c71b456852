// Package clock is Weft's one time source: the Clock interface that the
// engine, the export worker and the in-process lease manager read, the wall
// clock (System), and a clock tests move by hand (Manual), so that no test
// sleeps for time to pass.
//
// Layering: it imports only the standard library.
package clock

import (
	"context"
	"sync"
	"time"
)

// Clock tells the time.
type Clock interface {
	// Now answers the current time.
	Now() time.Time
}

var (
	_ Clock = System{}
	_ Clock = (*Manual)(nil)
)

// System is the wall clock, in UTC. Inside a testing/synctest bubble it is
// the bubble's fake clock.
type System struct{}

// Now answers the current time in UTC.
func (System) Now() time.Time { return time.Now().UTC() }

// Manual is a clock that moves only when told to. It is safe for concurrent
// use; its zero value reads the zero time.
type Manual struct {
	mu  sync.Mutex
	now time.Time
}

// NewManual answers a Manual clock reading start.
func NewManual(start time.Time) *Manual { return &Manual{now: start} }

// Now answers the time the clock was last set or advanced to.
func (m *Manual) Now() time.Time {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.now
}

// Advance moves the clock forward by d (backwards when d is negative).
func (m *Manual) Advance(d time.Duration) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = m.now.Add(d)
}

// Set moves the clock to t.
func (m *Manual) Set(t time.Time) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.now = t
}

// Sleep waits d, or until ctx ends, and answers ctx's error when it ended
// first. A d of zero or less does not wait and answers nil.
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}
