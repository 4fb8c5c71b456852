// Package store is Weft's storage seam: a small hierarchical key-value
// contract that every engine feature is built on once, and that each backend
// implements in a few hundred lines.
//
// The contract is the [Store] interface: [Store.Get], ordered prefix and range
// scans with limits and resumption ([Store.Scan]), and atomic batches of puts
// and deletes that may carry per-key preconditions ([Store.Commit]). A backend
// declares what it guarantees through [Capabilities]; nothing is inferred.
// Features that need conditional batches check [Capabilities.ConditionalBatch]
// and fail fast with a [*CapabilityError] — they never fall back to
// read-then-write.
//
// Every stored key carries a version: a non-zero uint64 that changes on every
// write of that key and is never reused for that key within one store, not
// even after the key is deleted and written again. Versions are opaque: only
// compare them for equality.
//
// Keys are built with the codec in key.go ([Key], [SplitKey], [KeyPrefix],
// [Uint64], [Time]): components are escaped reversibly, so two different
// component tuples never share a key, and numeric components are fixed-width so
// that byte order equals numeric order.
//
// Errors that leave a backend are the sentinels and typed errors of errors.go,
// never raw driver errors: [ErrNotFound], [*ConditionFailedError],
// [*OutcomeUnknownError] (the commit may or may not have happened: re-read,
// never blindly retry), [ErrRetryable] (nothing was committed), [*CapabilityError],
// [*ValueTooLargeError], [ErrInvalidArgument] and [ErrClosed]. No error message
// contains value bytes.
//
// A Commit whose caller gives up (its context ends) answers either an error
// other than [*OutcomeUnknownError], and then the batch never commits, or
// [*OutcomeUnknownError], and then every batch committed later through the
// same store that conditions or writes any of its keys is ordered after it:
// the given-up batch commits before that later batch or never. A backend
// never answers an error for a batch that then commits after a later batch
// on its keys (docs/storage.md, "A commit given up on").
//
// Layering: this package imports only the standard library. It must never
// import a database library, a backend, engine/ or server/. Backends live
// beside it, one package each (memstore, pebblestore, sqlstore, nocasstore,
// faultstore), import store, and translate their driver's errors once, at
// their edge. The shared conformance suite is conformance/storetest.
package store
