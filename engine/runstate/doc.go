// Package runstate is a run's state machine as pure code: the checkpoint
// (State, StepState and what they hold), the run and step statuses and the
// one table of legal transitions between them, the event model (Event and
// its payload, EventData) with the idempotency key of each event, and the
// reduction of a run's events onto a Snapshot (Project). Every function here
// takes state and events and answers new state; nothing reads a clock,
// a store or the network, so the rules can be tested on their own.
//
// The stored types carry a wire tag on every field: its number in the
// binary record engine/runcodec stores (docs/persisted-format.md), from
// which tools/codecgen generates that codec. A new field takes the next
// free number; a number is never reused.
//
// Layering: it may import the standard library and engine/definition, never the
// engine, the store, a transport or generated code.
package runstate
