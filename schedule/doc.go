// Package schedule starts runs on their own: named schedules fire a stored
// definition on a cron expression or an interval, in a time zone, with an
// overlap policy, a catch-up window after downtime, pause and resume, manual
// triggers and backfills (docs/semantics.md#schedules).
//
// Exactly once. A fire is decided before it is done: the schedule's record
// takes the fire into its pending list with a compare-and-set on the record's
// version, and only then is the run submitted, with run_request_id = the
// schedule id and the fire's nominal time. The submission is idempotent on
// that id (the engine's run-request uniqueness), so a process that crashes
// after deciding leaves the fire pending for the next tick of any process,
// and two processes that both submit one pending fire find one run. A fire
// leaves the pending list only in a compare-and-set that records its run.
// A manual trigger with a request id uses that id instead of the time, and
// the record remembers the runs of its latest request ids, so retries of one
// trigger start one run.
//
// Updates. Update first decides and submits what is due under the old spec,
// then writes the change with the cursor moved to the update's instant, so
// the new spec fires from its first nominal time after the update and no
// nominal time is decided twice; a change of what a fire submits (the
// definition, the input) waits until no fire is pending
// (docs/semantics.md#schedule-update).
//
// Metrics. Every write counts the decisions it recorded (fires, skipped,
// missed, failed) for the process that made it, and every read notes the
// record's lag of its latest fire; Stats answers them for weftd's /metrics.
//
// It builds on the engine's public API only (SubmitRun, GetRun) and on the
// store contract; it needs a store with conditional batches. Its records
// live under their own key prefix, "sch" (docs/persisted-format.md).
//
// Layering: it may import the engine (its public API and engine/definition,
// engine/runstate), the store contract (never a backend), the cron parser
// github.com/robfig/cron/v3 and the standard library; the server imports it,
// the engine never does.
package schedule
