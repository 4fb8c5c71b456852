// Package record holds the records the engine keeps beside a run's log and
// checkpoint (docs/persisted-format.md): the run's immutable record, task
// records, durable timers, and the key of every one of them and of the
// indexes that follow a run's status (the run index, the status index, the
// pending-trigger marker, the queues' ready entries, the search index and
// the tenants' search attribute types). The run's log — its
// events, checkpoint and outbox — is engine/runlog's.
//
// It holds the form and the keys only; the engine reads and writes them.
// Components go through the store's escaping codec, so no identifier can
// collide with another or break out of its prefix.
//
// Layering: it may import the standard library, the store contract
// (package store), engine/keyspace (the key prefixes), engine/definition, engine/runstate, engine/runcodec
// and engine/runquery (the values the search index encodes) only (tools/weftlint enforces it).
package record
