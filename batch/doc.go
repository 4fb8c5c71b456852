// Package batch runs batch operations: one operation — cancel, pause,
// resume, rerun from a step, retry a step, signal or delete — over a
// selection of runs, durably in the background, at most a rate of runs per
// second (docs/semantics.md#batches).
//
// Durability. StartBatch stores the selection (one record per run, under a
// nonce of its own) and then the batch's record, on condition that no record
// of its id exists: the same batch id again answers that record. A batch is
// then driven by one weftd at a time, its owner: the record names the owner
// process and when its lease ends, and every write of the record — taking
// it, acting on a run, renewing the lease — is a conditional batch on the
// record's version, so two weftds never both drive one batch: a second one
// takes it only after the lease ended, and the first one's next write then
// fails its condition and it stops. A crash or failover resumes the batch at
// the first run not recorded as acted on.
//
// Exactly once. Each run is acted on through the engine's idempotent call
// for it, with the signal id "batch:{batch}" (control signals and signals
// are accepted once per id), and its outcome is recorded in the same write
// that moves the batch past it. A run acted on just before a crash, whose
// outcome was not recorded, is acted on again by the next owner: the engine
// answers the first acceptance, and the run changes once. A delete, which
// takes no id, is marked attempted before it is sent, so that a run found
// gone on resume counts as deleted.
//
// It builds on the engine's public API only and on the store contract; it
// needs a store with conditional batches. Its records live under their own
// key prefixes, "bat", "btr" and "bta" (docs/persisted-format.md).
//
// Layering: it may import the engine (its public API and engine/runstate),
// engine/keyspace, the store contract (never a backend), google/uuid and the standard
// library; the server imports it, the engine never does.
package batch
