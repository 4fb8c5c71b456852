// Package engine is Weft's domain: the scheduler, the run and step state
// machines, retries and timeouts, compensation, signals, manual completion,
// activity result reconciliation, the append-only event log and its
// projections, checkpoint commits, run ownership, and retention, which
// removes finished runs with every record they own (retention.go).
//
// Workflow definitions, their loading, defaults, validation and retry
// arithmetic live in engine/definition; the run's state, statuses,
// transition tables, events and their projection onto a snapshot live in
// engine/runstate. Neither imports anything of the engine.
//
// It decides and commits; what a committed decision did reaches the callers
// waiting on it (long polls, hand-offs, event watches, AwaitRun) through
// engine/internal/dispatch, which never decides.
//
// Layering: it may import the store contract (package store, never a
// backend), the lease interface, internal/clock, its own packages and the
// standard library with uuid and YAML. It knows nothing of HTTP or Connect:
// the server package translates between the API and the engine, and no
// package of the engine, tests included, imports the server (tools/weftlint
// and engine/imports_test.go enforce both). The one place it meets Protobuf
// is engine/eventpb, which checks each event against the proto's rules
// before it is appended (docs/semantics.md#event-validation).
package engine
