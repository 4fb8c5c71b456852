// Package admission holds the concurrency limits' slots and the queue of
// runs waiting for one (docs/semantics.md#backpressure).
//
// A run holds a slot of each limit while it is started: the engine claims
// the free slots this package finds with an absent-condition in the batch
// that starts the run and deletes them in the batch that ends it, so no two
// runs ever hold one slot and a limit is never exceeded, whatever number of
// engines start runs at once. Admission reads the store to find free slots
// and queued runs; it never writes, and what a run does at a limit (REJECT,
// QUEUE, DELAY) is the decision rules'.
//
// Layering: it may import the standard library, the store contract
// (package store) and engine/keyspace (the key prefixes) only (tools/weftlint enforces it).
package admission
