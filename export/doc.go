// Package export publishes the transactional outbox to an event bus
// (docs/semantics.md#outbox). The engine, configured with Outbox, writes
// for every decision that appends events one entry under
// runlog.OutboxPrefix() in the same conditional batch, which refers to those
// events rather than copying them; a Worker scans that prefix in key order,
// resolves each page of entries to their events in one read
// (runlog.ResolveOutbox, which also reads the entries of older weftds, each
// a copy of one event), hands each event's JSON to a Publisher, in run_seq
// order, and deletes an entry — by a conditional batch on its version —
// only after every event it names was published. A refusal of one of them
// is counted against the entry, which is published whole again. Delivery is
// therefore at least once: a crash between publish and acknowledgement
// publishes again, and several workers on one store may publish the same
// event. Consumers deduplicate by event_id or by (run_id, run_seq).
//
// Run spaces its passes so that each finds about a page of entries, between
// Config.Linger and Config.MaxLinger. An acknowledgement that finds entries
// already gone ends the pass — another worker is going through them — and
// Run stands by for Config.MaxLinger rather than race it page for page.
//
// On a store that reports every put under a prefix (the Pebble store, whose
// directory lock keeps other processes out) a pass does not start at the
// beginning of the outbox but where the last pass left no live entry below:
// each reported put lowers that position, and a pass raises it only if no put
// was reported while it ran (resume.go). Elsewhere, and in a new worker,
// passes start at the beginning.
//
// Failures are retried with exponential backoff and full jitter, counted in a
// retry record (obr:{run}:{run_seq}) so that restarts keep counting; after
// Config.MaxAttempts failures the entry moves, in one batch with the outbox
// deletion, to a dead-letter record (dlq:{run}:{run_seq}) and the alert
// EVENT_BUS_DELIVERY_FAILED is raised (an OpenTelemetry counter and a
// structured log line). A bus that is unavailable (ErrUnavailable) fails no event: the
// worker backs off as a whole and the entries wait in the outbox.
//
// With Config.OutboxCache, the cache of the entries its process's engine
// committed, a worker takes those entries' events from memory instead of
// reading them back (docs/export.md#the-outbox-cache); all others are read
// from the store.
//
// Layering: export imports store, engine/keyspace (the key prefixes), engine/runlog (only for the outbox:
// OutboxPrefix, ResolveOutbox, OutboxEntry, OutboxCache), telemetry, internal/clock, internal/reuse, the OpenTelemetry metric API and
// the standard library. Bus backends live beside it, one package each (export/redisbus); MemoryBus is
// the in-process bus of the embedded deployment and of tests. Nothing that
// runs a workflow waits on this package.
package export
