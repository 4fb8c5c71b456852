// Package queues describes a tenant's queues (docs/semantics.md#pollers):
// each queue's backlog of ready tasks, its oldest ready task and the
// workers polling it, and it writes this process's poller records. The
// backlog is read from the ready entries (engine/internal/record's keys),
// the pollers from engine/internal/pollers' records merged with what this
// process knows of its own (engine/internal/dispatch's Pollers).
//
// The engine builds a Desk over its store and dispatcher for each call and
// answers its API with it; which tokens are settled (no longer claimed) is
// the engine's to say, passed in as a function.
//
// Layering: it may import the standard library, the store contract
// (package store), engine/keyspace, engine/internal/dispatch, engine/internal/pollers and
// engine/internal/record only (tools/weftlint enforces it).
package queues
