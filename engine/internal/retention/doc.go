// Package retention holds how a finished run is removed
// (docs/semantics.md#retention): the index of expiries that tells the
// background pass which runs have expired, and the bounded batches that
// delete every record a run owns, each going on from where the previous one
// stopped.
//
// It decides what one batch does — wait for the run's events to be
// exported, hide the run, delete its records, finish — and reads the store
// to find them; the engine makes each batch a fenced decision of the run's
// owner, writes what it does through a Run and commits it. Retention never
// commits, and knows nothing of the records beyond their keys: the engine
// names the prefixes a run owns and deletes what a record names outside
// them.
//
// Layering: it may import the standard library, the store contract
// (package store) and engine/keyspace (the key prefixes) only (tools/weftlint enforces it).
package retention
