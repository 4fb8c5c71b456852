// Package pebblestore is the embedded default store.Store, on Pebble
// (github.com/cockroachdb/pebble/v2) in a local directory.
//
// Durability: every commit is applied with pebble.Sync, so a batch that
// Commit acknowledged survives a crash of the process.
//
// Concurrency: any number of goroutines in one process may share a Store
// (Pebble's directory lock keeps a second process out). Commits go through a
// group-commit queue (queue.go, group.go): the first committer to find no
// leader leads; it takes every batch already queued, up to
// Config.MaxGroupBatches and Config.MaxGroupBytes, decides their conditions
// one by one in arrival order, each against the store plus the writes of the
// batches accepted before it in the group, folds the accepted ones into one
// Pebble batch, applies it with one sync, answers each caller, and hands the
// lead to the next queued committer. Groups are committed one at a time and
// hold what queued while the previous one synced; nothing waits for more to
// arrive, so a lone committer pays one sync as before. Each batch keeps its
// own outcome: a failed condition fails that batch alone, and only a failed
// apply fails the whole group (every batch gets *store.OutcomeUnknownError).
// A caller whose ctx ends while its batch is still queued withdraws it
// (ctx.Err(), nothing written); once a leader has taken it, the caller may
// leave with *store.OutcomeUnknownError. Conditional batches stay
// linearizable: each is decided at its place in the queue, against everything
// decided before it. Reads take no lock: Get reads the latest
// applied batch and Scan reads through one iterator, i.e. one consistent
// Pebble snapshot, so neither ever sees part of a batch, and a Commit returns
// only once its batch is visible to them.
//
// Watching puts: WatchPuts tells a callback, after each group that put keys
// under a prefix (or whose apply failed, so that it may have), the least such
// key, once the group is visible and before its commits return. As no other
// process can write the store, a watcher hears of every put; the export
// worker keeps its place in the outbox with it.
//
// Conditions: the leader reads a condition's key from the writes of the
// batches accepted before it in the group, else from the recent versions
// (recent.go: the versions of the last keys the store wrote, which the leader
// alone keeps, so a condition on a key written moments ago — a checkpoint, a
// task — reads nothing), else from Pebble through one iterator per group that
// consults the tables' bloom filters on every level (conditions.go), so that
// an absent key — an idempotency key, a new run's checkpoint — seldom reads a
// table.
//
// Caching: Config.CacheBytes sizes Pebble's block cache (the tables' data,
// index and filter blocks), DefaultCacheBytes by default. Pebble reserves
// its memtables' memory in that cache, so the store gives Pebble a cache
// larger by the memtables' most (memTableReservation).
//
// Deletes: store.Delete writes a Pebble tombstone; store.DeleteOnce (a key
// put at most once since it was last absent) a single delete, which vanishes
// with the put it meets instead of being carried to the bottom level. L0
// compacts past l0CompactionFiles tables, so that a bulk load's disjoint
// tables do not wait there for a later workload to pay for them.
//
// On-disk layout (part of the persisted format, see docs/storage.md):
//
//	'r' + key            → 0x01 | version (8 bytes, big-endian) | value
//	'm' + "format"       → 0x01 (layout version)
//	'm' + "seq"          → last version handed out (8 bytes, big-endian)
//
// Each batch that writes takes the next number from "seq" and gives it to
// every key it writes (batches of one group take successive numbers); the
// group's Pebble batch carries the last one, so versions never repeat for a
// key — within a group, across deletes and restarts alike.
//
// Layering: imports store and Pebble.
package pebblestore
