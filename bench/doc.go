// Package bench is Weft's end-to-end benchmark harness (issue 8). It measures
// the commit ceiling of the databases under Weft — raw single-row INSERT
// transactions on PostgreSQL and synced single-key Pebble writes, at 1 and 32
// concurrent committers — and then Weft itself: W workflows of S no-op steps
// submitted by C concurrent clients to a real weftd process over loopback
// Connect, executed by the SDK's worker runtime polling that weftd over the
// network, in the cluster configuration (PostgreSQL, cas-required, Redis
// leases) and the embedded one (Pebble). Each figure is reported beside the
// ceiling measured in the same run, as a ratio, with the targets.
// Each configuration then runs, one at a time, a forEach step over 100 no-op
// items beside a sequence of 100 no-op steps, for the fan-out's items/s
// (docs/performance.md#fan-out).
//
// Correctness comes first: every workflow must end COMPLETED, and a run that
// fails or times out fails the benchmark. The harness cleans up the weftd
// processes it starts, the scratch schemas it creates and its temporary
// directories, also when it fails.
//
// The scale mode (Config.Scale, opt-in: it takes about half an hour) measures
// the two targets that need a big store. Stored runs: a template run goes
// through a weftd, and bench/fill writes clones of its records into another
// weftd's store while that weftd is stopped, up to 10k, 100k and 1M
// completed runs; at each size weftd is started again, a few clones are
// read back through the API, and the workload is measured. Active runs:
// 100k runs whose first step waits on a queue no worker polls are
// submitted through the API, and weftd's memory is read after the
// submissions, after its background loops ran for a while, and with the
// workload on top — then again on a weftd restarted over the same store.
//
// Layering: bench is a program's library. It speaks to a running Weft only
// through the public API (client/ and client/worker) and a weftd binary; it
// imports pgx and Pebble only to measure the raw ceilings. Its scale mode
// also opens a stopped weftd's store (store, pebblestore, sqlstore; engine/keyspace for its keys) to fill
// it through bench/fill and to count its status index; it never imports the
// server, and from the engine bench/fill takes only the pure functions that
// name records. It prints nothing itself: cmd/weftbench renders the Report.
package bench
