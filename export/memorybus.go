package export

import (
	"bytes"
	"context"
	"sync"
)

// DefaultMemoryBusMaxLen is how many messages a MemoryBus keeps by default.
const DefaultMemoryBusMaxLen = 100_000

// MemoryBus is the in-process bus of the embedded deployment and of tests: an
// append-only log of every message published, duplicates included, bounded
// like a Redis stream with MAXLEN ~ (the oldest messages are trimmed once the
// log holds a quarter more than its bound). It is safe for concurrent use.
type MemoryBus struct {
	mu     sync.Mutex
	maxLen int
	base   int // offset of msgs[0] in the whole history
	msgs   []Message
	wake   chan struct{}
}

var _ Publisher = (*MemoryBus)(nil)

// MemoryBusOption configures a MemoryBus.
type MemoryBusOption func(*MemoryBus)

// WithMaxLen bounds the log to about n messages (n > 0).
func WithMaxLen(n int) MemoryBusOption {
	return func(b *MemoryBus) {
		if n > 0 {
			b.maxLen = n
		}
	}
}

// NewMemoryBus answers an empty bus.
func NewMemoryBus(opts ...MemoryBusOption) *MemoryBus {
	b := &MemoryBus{maxLen: DefaultMemoryBusMaxLen, wake: make(chan struct{})}
	for _, o := range opts {
		o(b)
	}
	return b
}

// Publish implements Publisher: it appends a copy of msg to the log.
func (b *MemoryBus) Publish(ctx context.Context, msg Message) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	msg.Event = bytes.Clone(msg.Event)
	b.mu.Lock()
	defer b.mu.Unlock()
	b.msgs = append(b.msgs, msg)
	if len(b.msgs) > b.maxLen+b.maxLen/4 {
		drop := len(b.msgs) - b.maxLen
		b.base += drop
		b.msgs = append([]Message(nil), b.msgs[drop:]...)
	}
	close(b.wake)
	b.wake = make(chan struct{})
	return nil
}

// Messages answers the messages the log holds, oldest first, duplicates
// included.
func (b *MemoryBus) Messages() []Message {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]Message(nil), b.msgs...)
}

// Published answers how many messages were ever published, trimmed ones
// included.
func (b *MemoryBus) Published() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.base + len(b.msgs)
}

// Subscribe answers a reader positioned at the oldest message the log holds.
func (b *MemoryBus) Subscribe() *Subscription {
	b.mu.Lock()
	defer b.mu.Unlock()
	return &Subscription{bus: b, next: b.base}
}

// Subscription reads a MemoryBus in publish order. It is for one goroutine.
type Subscription struct {
	bus     *MemoryBus
	next    int
	skipped int
}

// Next answers the next message, waiting for one until ctx is done.
func (s *Subscription) Next(ctx context.Context) (Message, error) {
	for {
		b := s.bus
		b.mu.Lock()
		if s.next < b.base { // trimmed before we read them
			s.skipped += b.base - s.next
			s.next = b.base
		}
		if i := s.next - b.base; i < len(b.msgs) {
			msg := b.msgs[i]
			s.next++
			b.mu.Unlock()
			return msg, nil
		}
		wake := b.wake
		b.mu.Unlock()
		select {
		case <-wake:
		case <-ctx.Done():
			return Message{}, ctx.Err()
		}
	}
}

// Skipped answers how many messages were trimmed before this reader got to
// them.
func (s *Subscription) Skipped() int { return s.skipped }
