// Package bench is Weft's end-to-end benchmark harness (issue 8). It measures
// the commit ceiling of the databases under Weft — raw single-row INSERT
// transactions on PostgreSQL and synced single-key Pebble writes, at 1 and 32
// concurrent committers — and then Weft itself: W workflows of S no-op steps
// submitted by C concurrent clients to a real weftd process over loopback
// Connect, executed by the SDK's worker runtime polling that weftd over the
// network, in the cluster configuration (PostgreSQL, cas-required, Redis
// leases) and the embedded one (Pebble). Each figure is reported beside the
// ceiling measured in the same run, as a ratio, with the targets.
//
// Correctness comes first: every workflow must end COMPLETED, and a run that
// fails or times out fails the benchmark. The harness cleans up the weftd
// processes it starts, the scratch schemas it creates and its temporary
// directories, also when it fails.
//
// Layering: bench is a program's library. It speaks to Weft only through the
// public API (client/ and client/worker) and a weftd binary; it imports pgx and
// Pebble only to measure the raw ceilings, never the engine, store or server.
// It prints nothing itself: cmd/weftbench renders the Report.
package bench
