// Package worker is Weft's worker runtime: it registers activities and
// compensation operations by name with typed JSON input and output, polls a
// queue for their tasks, runs at most Options.Concurrency of them at once,
// heartbeats while they run, and reports each result or failure.
//
// Behaviour, in the order a task meets it:
//
//   - Polling asks for at most as many tasks as there are free slots, and
//     only for the activities and compensations registered here, on one queue.
//   - Eager dispatch: each completion also asks for one next task
//     (CompleteTaskRequest.next_tasks), and a task the result made ready runs
//     next in the same slot, with no poll in between: a worker running a
//     sequence takes each next step with its report. Once Run's context has
//     ended, completions ask for none. A server that predates eager dispatch
//     answers none, and the worker polls as before.
//   - The activity's context ends at the task's deadline (its timeout_ms) and
//     when a heartbeat answers cancel_requested or the claim is lost.
//     Heartbeats go every heartbeat_timeout/3 when the action has a heartbeat
//     timeout, else every Options.HeartbeatInterval (default 10 s).
//   - Heartbeat(ctx, details) sends one now with the activity's progress;
//     weftd keeps the latest, and when the attempt fails or times out the
//     next attempt reads them with HeartbeatDetails (Info(ctx).HeartbeatDetails;
//     docs/semantics.md#heartbeat-details).
//   - The input is the action's input decoded as JSON into In; a decoding
//     error fails the task with class VALIDATION. Info(ctx) gives the run's
//     input, upstream outputs, Weft's idempotency key and the attempt numbers.
//   - A returned Out is encoded as JSON and completed. A returned error fails
//     the task with the class Fail gave it (UNKNOWN by default — retryable
//     until attempts run out), CANCELLED after a cancel request, TIMEOUT when
//     the deadline passed. RateLimited(err, d) fails it with class
//     RATE_LIMIT and retry_after d: the next attempt starts no sooner
//     (docs/semantics.md#retry-after). A panic fails the task with class AGENT_ERROR; the
//     worker keeps running.
//   - Graceful shutdown: when Run's context ends, polling stops (a poll in
//     flight is cancelled), in-flight tasks finish and report for up to
//     Options.ShutdownTimeout, and then their contexts are cancelled and they
//     are abandoned unreported: their claims time out on the server (at the
//     heartbeat timeout or the attempt deadline) and the engine retries them
//     under the action's policy. Nothing is reported as failed on shutdown.
//
// Verification (docs/semantics.md#reconciliation): an activity registered with both
// WithIdempotencyKey and WithVerify is announced as verifiable, and its
// completions and failures carry the derived key as reconciliation_key. When
// an attempt may have left a side effect behind (it timed out, or failed with
// SideEffectPossible), the engine hands this worker a verify task before any
// redispatch; the runtime runs the registered verify function and reports its
// VerifyState with ReportVerification.
//
// Layering: imports client, gen/ (the API's messages), protobuf's JSON and
// structpb, and the standard library; like client, it never imports the
// engine, the store or the server.
package worker
