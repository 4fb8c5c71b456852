package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
)

// Message is one event on its way to the bus: the envelope fields consumers
// deduplicate and route by, and the event itself as JSON.
type Message struct {
	// TenantID is the tenant the run belongs to; buses partition by it.
	TenantID string
	// EventID is the event's unique id (deduplication key).
	EventID string
	// RunID and RunSeq identify the event within its run (deduplication key
	// and per-run order).
	RunID  string
	RunSeq uint64
	// EventType is the event's type, e.g. "StepCompleted".
	EventType string
	// Event is the event's JSON (runstate.Event's encoding, as the API's
	// event JSON has it): made from the stored event, or, for an entry an
	// older weftd wrote, the copy it holds, byte for byte.
	Event json.RawMessage
}

// Publisher hands messages to an event bus. Publish returns nil only once the
// bus has accepted the message durably enough for its guarantees; it may be
// called again with the same message (at least once). Errors must not carry
// the payload: they are stored in retry and dead-letter records and logged.
//
// Wrap an error in ErrUnavailable (see Unavailable) when the bus itself is
// unreachable rather than the message refused: the worker then backs off as a
// whole and counts no attempt against the message.
//
// A publisher keeps nothing of a message once Publish returns — neither msg
// nor the bytes of msg.Event (copy what it needs later): the worker writes
// the next page's messages over that memory.
type Publisher interface {
	Publish(ctx context.Context, msg Message) error
}

// BatchPublisher is a Publisher that hands the bus many messages in one round
// trip; the worker gives it each page's due entries at once. PublishBatch
// publishes msgs in order and stops at the first it cannot publish: it
// answers how many it published, always the first n of msgs, and, when n is
// less than len(msgs), why msgs[n] was not, as Publish would answer it. No
// message after that one may reach the bus, so a run's events still arrive in
// run_seq order and a refused one still holds back the later ones of its run.
// As Publish, it keeps nothing of msgs, the slice or its messages, once it
// returns.
type BatchPublisher interface {
	Publisher
	PublishBatch(ctx context.Context, msgs []Message) (int, error)
}

// ErrUnavailable marks a publish failure of the bus as a whole (connection
// refused, timeout, bus loading): no attempt is counted against the message.
var ErrUnavailable = errors.New("export: event bus unavailable")

// Unavailable wraps err so that errors.Is(err, ErrUnavailable) holds.
func Unavailable(err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrUnavailable, err)
}

// PublisherFunc adapts a function to Publisher.
type PublisherFunc func(ctx context.Context, msg Message) error

// Publish calls f.
func (f PublisherFunc) Publish(ctx context.Context, msg Message) error { return f(ctx, msg) }
