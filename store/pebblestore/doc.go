// Package pebblestore is the embedded default store.Store, on Pebble
// (github.com/cockroachdb/pebble/v2) in a local directory.
//
// Durability: every commit is one Pebble batch applied with pebble.Sync, so a
// batch that Commit acknowledged survives a crash of the process.
// Concurrency: any number of goroutines in one process may share a Store
// (Pebble's directory lock keeps a second process out). Commits are
// serialised by one mutex around check-conditions-then-apply, which makes
// conditional batches linearizable; reads never take it: Get reads the latest
// applied batch and Scan reads through one iterator, i.e. one consistent
// Pebble snapshot, so neither ever sees part of a batch.
//
// On-disk layout (part of the persisted format, see docs/storage.md):
//
//	'r' + key            → 0x01 | version (8 bytes, big-endian) | value
//	'm' + "format"       → 0x01 (layout version)
//	'm' + "seq"          → last version handed out (8 bytes, big-endian)
//
// Each commit takes the next number from "seq" and gives it to every key it
// writes, in the same Pebble batch, so versions never repeat for a key —
// across deletes and restarts alike.
//
// Layering: imports store and Pebble.
package pebblestore
