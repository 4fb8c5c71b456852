// Package pollers holds the poller records (docs/semantics.md#pollers):
// one small record per worker, queue and process, which each engine writes
// for the workers that poll it and refreshes, so that any engine of a
// cluster lists every poller at the cost of the pollers alone. It holds
// their keys and form, reads the live ones, merges one worker's records
// from several processes into what the API says of it, and sweeps the
// records of processes that stopped.
//
// What this process knows of its own pollers is engine/internal/dispatch's
// (dispatch.Pollers); the engine writes the records from it and lists the
// queues (their backlog and oldest ready task) around what this package
// reads. Sweeping is its only write: a delete of an expired record,
// conditioned on the version read where the store can.
//
// Layering: it may import the standard library, the store contract
// (package store) and engine/keyspace (the key prefixes) only (tools/weftlint enforces it).
package pollers
