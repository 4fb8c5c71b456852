// Package runlog is a run's log as stored (docs/persisted-format.md): its
// events, each once in engine/runcodec's binary form with its idempotency
// key's row; its checkpoint, in the same form; and the transactional
// outbox (docs/semantics.md#outbox), one entry per decision that names the
// events it appended, which the export worker resolves and publishes.
// Records an older weftd wrote as JSON still decode.
//
// It holds the keys, the writes a decision's batch gets and the reads of
// what they wrote; the engine decides and commits, and the export worker
// reads the outbox through ResolveOutbox. An OutboxCache, which the engine
// fills with the outbox entries its commits wrote once they succeeded,
// lets a worker in the same process resolve those without reading their
// events back (docs/export.md#the-outbox-cache). It never commits.
//
// Layering: it may import the standard library, the store contract
// (package store), engine/keyspace (the key prefixes), engine/runstate, engine/runcodec and internal/reuse only
// (tools/weftlint enforces it).
package runlog
