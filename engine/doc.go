// Package engine is Weft's domain: the Engine's API, and for each call the
// decision it makes about a run — loaded, decided, committed as one
// conditional batch, its effects handed on — with the records and keys
// beside the checkpoint, the append-only event log and its projections, run
// ownership and the background work, retention among it, which removes
// finished runs with every record they own (retention.go).
//
// Each call has its file, named after it (submitrun.go, startrun.go,
// signalrun.go, completemanualaction.go, control.go, polltasks.go,
// completetask.go, failtask.go, heartbeattask.go, reportverification.go,
// deleterun.go, awaitrun.go; the background work in timers.go,
// runqueue.go and retention.go): it shows the call's path from what it
// reads first to its commit, over one shared helper, commitDecision
// (decision.go), which loads the run, prepares what its rules read
// (prepare.go), decides under the run's lock and commits the change
// (change.go, built into a batch by batch.go). What a decision decides —
// given a run's state, its definition, what happened and what was
// prepared, what the run does next — is engine/internal/decide's, written
// through a write-only Recorder the change implements (ruleRecorder).
// Definitions live in engine/definition; the run's state, transition tables,
// events and their projection in engine/runstate; the write latency
// budget's classes in engine/internal/budget; which records a run owns and
// how its removal goes in bounded batches in engine/internal/retention; the
// concurrency slots and the run queue in engine/internal/admission; the
// run's log, checkpoint and outbox as stored in engine/runlog; the run,
// task and timer records beside it and their keys in
// engine/internal/record; the ownership modes and the fencing tenure in engine/internal/ownership; the
// poller records in engine/internal/pollers; a queue's description and the
// writing of this process's poller records in engine/internal/queues; the
// records a signal's or a manual completion's acceptance leaves in
// engine/internal/acceptance; the error vocabulary, one constructor per
// code, in engine/internal/fault (re-exported in errors.go); reading run
// records, checkpoints and task records through the caches of what this
// engine committed or read in engine/internal/cache. None imports the
// engine.
//
// It decides and commits; what a committed decision did reaches the callers
// waiting on it (long polls, hand-offs, event watches, AwaitRun) through
// engine/internal/dispatch, which never decides.
//
// Layering: it may import the store contract (package store, never a
// backend), the lease interface, internal/clock, internal/reuse, its own packages and the
// standard library with uuid and YAML. It knows nothing of HTTP or Connect:
// the server package translates between the API and the engine, and no
// package of the engine, tests included, imports the server (tools/weftlint
// and engine/imports_test.go enforce both). The one place it meets Protobuf
// is engine/eventpb, which checks each event against the proto's rules
// before it is appended (docs/semantics.md#event-validation).
package engine
