package runstate

import (
	"fmt"
	"math/bits"
)

// KeySpan is a part of a checkpoint's exact record of the idempotency keys
// its run has appended (docs/semantics.md#event-idempotency-key), for one
// scope (the run, State.RunKeys, or one step, StepState.Keys): the keys of
// every event type in Types at every logical attempt From..To; or, when
// Logical is set, of the types whose key includes the engine attempt
// (KeyHasEngineAttempt) at logical attempt Logical and every engine attempt
// From..To. The key is a function of (scope, logical attempt, event type,
// plan version [, engine attempt]), and the plan version is fixed per run,
// so a key is present iff one span of its scope holds it.
type KeySpan struct {
	Types   uint64 `json:"types" wire:"1"`
	Logical int    `json:"logical,omitempty" wire:"2"`
	From    int    `json:"from" wire:"3"`
	To      int    `json:"to" wire:"4,offset=From"`
}

// eventBits numbers the event types for KeySpan.Types. The numbers are
// persisted: a new type takes the next free bit, and no bit is ever reused.
var eventBits = map[string]uint64{
	EvRunSubmitted:          1 << 0,
	EvRunApproved:           1 << 1,
	EvRunQueued:             1 << 2,
	EvRunStarted:            1 << 3,
	EvRunBlocked:            1 << 4,
	EvRunUnblocked:          1 << 5,
	EvRunPaused:             1 << 6,
	EvRunDrained:            1 << 7,
	EvRunResumed:            1 << 8,
	EvRunCompensating:       1 << 9,
	EvRunCompleted:          1 << 10,
	EvRunFailed:             1 << 11,
	EvRunCancelled:          1 << 12,
	EvStepScheduled:         1 << 13,
	EvStepStarted:           1 << 14,
	EvStepCompleted:         1 << 15,
	EvStepFailed:            1 << 16,
	EvStepSkipped:           1 << 17,
	EvStepCancelled:         1 << 18,
	EvStepWaiting:           1 << 19,
	EvStepRetried:           1 << 20,
	EvStepAttemptRecorded:   1 << 21,
	EvStepVerified:          1 << 22,
	EvCompensationStarted:   1 << 23,
	EvCompensationSucceeded: 1 << 24,
	EvCompensationFailed:    1 << 25,
	EvSignalAccepted:        1 << 26,
	EvSignalRejected:        1 << 27,
	EvSignalConsumed:        1 << 28,
	EvRunRerun:              1 << 29,
	// Bits 50–53 are the step kinds' (their numbers follow the proto
	// payload numbers, so that branches adding events do not clash); 35–36
	// the sub-workflow events'.
	EvStepSleeping:    1 << 50,
	EvStepIterated:    1 << 51,
	EvChildRunStarted: 1 << 35,
	EvChildRunEnded:   1 << 36,
	// Bit 54: StepFannedOut's proto payload number (docs/semantics.md#for-each).
	EvStepFannedOut: 1 << 54,
	// Bit 34: its proto payload number.
	EvSearchAttributesUpserted: 1 << 34,
}

// EventTypes answers every event type a key record numbers.
func EventTypes() []string {
	out := make([]string, 0, len(eventBits))
	for t := range eventBits {
		out = append(out, t)
	}
	return out
}

// eventBit answers the bit of an event type; a type without one is a
// programming error (every type is a constant of this package).
func eventBit(typ string) uint64 {
	bit, ok := eventBits[typ]
	if !ok {
		panic(fmt.Sprintf("runstate: event type %q has no key bit (runstate/keys.go)", typ))
	}
	return bit
}

// KeyHasEngineAttempt reports whether the key of an event type includes its
// engine attempt (IdempotencyKey).
func KeyHasEngineAttempt(eventType string) bool { return eventType == EvStepAttemptRecorded }

// keysOf answers the key record of a scope: the run's for RunStepID (or
// ""), else the step's; nil for a step the run does not have.
func (s *State) keysOf(stepID string) *[]KeySpan {
	if stepID == "" || stepID == RunStepID {
		return &s.RunKeys
	}
	if st := s.Step(stepID); st != nil {
		return &st.Keys
	}
	return nil
}

// keyCoords answers the span coordinates of a key: its bit, the logical
// attempt a span must have (0 but for KeyHasEngineAttempt), and the number
// the span ranges over. It normalises as IdempotencyKey does.
func keyCoords(typ string, logical, engineAttempt int) (bit uint64, spanLogical, n int) {
	if logical < 1 {
		logical = 1
	}
	if KeyHasEngineAttempt(typ) {
		return eventBit(typ), logical, engineAttempt
	}
	return eventBit(typ), 0, logical
}

// HasKey reports whether the checkpoint's record holds the key of an event
// of type typ at stepID, logical and engine attempt: whether the run has
// appended an event with that key. Only a checkpoint with KeysTracked has a
// record.
func (s *State) HasKey(typ, stepID string, logical, engineAttempt int) bool {
	keys := s.keysOf(stepID)
	if keys == nil {
		return false
	}
	bit, l, n := keyCoords(typ, logical, engineAttempt)
	for _, sp := range *keys {
		if sp.Types&bit != 0 && sp.Logical == l && sp.From <= n && n <= sp.To {
			return true
		}
	}
	return false
}

// AddKey records the key of an appended event in the checkpoint's record,
// and answers false when it was there already. It widens a span the key
// adjoins rather than adding one: a scope holds a span per logical attempt
// (run-level counters: per run of consecutive numbers of one type). A step
// the run does not have is a programming error.
func (s *State) AddKey(typ, stepID string, logical, engineAttempt int) bool {
	if s.HasKey(typ, stepID, logical, engineAttempt) {
		return false
	}
	keys := s.keysOf(stepID)
	if keys == nil {
		panic(fmt.Sprintf("runstate: an event for step %q, which run %s does not have", stepID, s.RunID))
	}
	bit, l, n := keyCoords(typ, logical, engineAttempt)
	spans := *keys
	for i := range spans { // another type at the same number
		if sp := &spans[i]; sp.Logical == l && sp.From == n && sp.To == n {
			sp.Types |= bit
			return true
		}
	}
	for i := range spans { // the next number of the same type
		if sp := &spans[i]; sp.Logical == l && sp.Types == bit && sp.To == n-1 {
			sp.To = n
			return true
		}
	}
	*keys = append(spans, KeySpan{Types: bit, Logical: l, From: n, To: n})
	return true
}

// NoteKeys records the keys of a decision's appended events.
func (s *State) NoteKeys(events []Event) {
	for i := range events {
		ev := &events[i]
		s.AddKey(ev.Type, ev.StepID, ev.LogicalAttempt, ev.EngineAttempt)
	}
}

// SameKey reports whether an event has the key of an event of type typ at
// stepID, logical and engine attempt (the run and plan version being the
// run's), without hashing.
func (ev *Event) SameKey(typ, stepID string, logical, engineAttempt int) bool {
	if stepID == "" {
		stepID = RunStepID
	}
	if logical < 1 {
		logical = 1
	}
	evStep, evLogical := ev.StepID, ev.LogicalAttempt
	if evStep == "" {
		evStep = RunStepID
	}
	if evLogical < 1 {
		evLogical = 1
	}
	return ev.Type == typ && evStep == stepID && evLogical == logical &&
		(!KeyHasEngineAttempt(typ) || ev.EngineAttempt == engineAttempt)
}

// EventTypeBit answers the bit number of an event type in KeySpan.Types,
// which is persisted and never reused (the stored event groups name a
// type by it too), and whether the type has one.
func EventTypeBit(typ string) (uint, bool) {
	bit, ok := eventBits[typ]
	if !ok {
		return 0, false
	}
	return uint(bits.TrailingZeros64(bit)), true
}
