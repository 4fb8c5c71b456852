// Package fill writes completed runs into a stopped weftd's store in bulk,
// for the benchmark's scale mode (issue 8: cost per step between 10k and 1M
// stored runs). Submitting a million runs through the API takes hours, so
// fill clones one real run instead: a Template holds every record a weftd
// left for one completed run (captured from that weftd's store after it
// stopped), and Fill writes N copies of it under new identities in large
// store batches.
//
// A clone is what the engine would have written for a run of the same shape
// submitted at another time: a new time-ordered run id and run_request_id,
// every timestamp shifted by the same amount (the run's internal timings are
// the template's), fresh event ids and task-claim tokens, and the
// idempotency keys of its events recomputed with the engine's own function
// (engine.IdempotencyKey), in the event records and in their uniqueness keys
// alike. The indexes come along because they are records of the run: the
// status index (rs:), the run_request_id index (rr:), the retention index
// (rx:, the run's expiry, shifted like its other timestamps) and, in a
// template an older weftd left, the tenant's run index (ri:, newest
// first). Compile refuses a template holding an
// identifier it does not know how to renew, so that a new kind of record
// cannot be cloned unchanged by accident.
//
// What a clone leaves out: outbox entries still waiting for the export
// worker when the template's weftd stopped (a stored run's entries were
// published and deleted long ago). What a bulk fill cannot reproduce: the
// tombstones of the keys a real history wrote and deleted (ready-task
// entries, timers, pending triggers, earlier status-index entries, outbox
// entries), which a store's compactions drop over time; the filled store is
// like a long-lived one whose compactions have caught up.
//
// Events and checkpoints the engine stores in binary (engine/runcodec) are
// compiled in their JSON form and rendered back into the format they were
// stored in, so a clone's records are byte for byte what the engine writes.
//
// Layering: imports store (the contract every backend implements) and, from
// engine, only the pure functions that name and encode records
// (IdempotencyKey, OutboxPrefix, engine/runcodec). It never opens a backend itself: callers pass a
// store.Store, so Pebble and PostgreSQL are filled the same way, through
// Commit.
package fill
