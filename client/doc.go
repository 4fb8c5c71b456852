// Package client is Weft's Go SDK: a typed client over the generated Connect
// client (faults as typed errors with a stable code) and, in client/worker, a
// worker runtime that registers activities, polls for tasks, heartbeats and
// reports results.
//
// It may import gen/ and connect-go; it never imports the engine, the store or
// the server, so that it speaks to Weft only through the public API. The
// TypeScript client lives in client/ts.
//
// Every method takes the API's request message and answers its response
// message, so new fields are usable as soon as gen/ has them. Faults arrive as
// *Error, whose Code is stable (see the Code… constants and IsCode). Calls
// that are safe to repeat — reads, signals and control signals (which carry a
// signal_id), manual completions, task reports, and submissions with a
// run_request_id — are retried on transport failures, unavailability and
// deadlines with exponential backoff (WithRetry); nothing is retried on a 4xx
// answer. SignalRun and the control signals make one signal_id when the caller
// gives none and reuse it across their own retries.
//
// Like every consumer of the event log (docs/semantics.md#schema-evolution), the
// client tolerates unknown fields, unknown enum values and unknown event
// types: they are kept or ignored, never an error.
package client
