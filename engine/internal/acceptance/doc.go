// Package acceptance holds what the exactly-once acceptance of a signal or
// a manual completion leaves in the store, so that a duplicate answers the
// first acceptance (docs/semantics.md#signal-idempotency,
// docs/semantics.md#manual-completion): the keys of a signal's payload, its
// accepted-response record and their expiry index, a manual completion's
// record, the accepted-response record's form, and reading an earlier
// acceptance back — also the one whose payload is stored but whose record
// is not (docs/semantics.md#signal-crash-window).
//
// The engine writes these records in the decision that accepts, and
// removes them when they expire; this package only reads.
//
// Layering: it may import the standard library, the store contract
// (package store), engine/keyspace (the key prefixes) and engine/runstate only (tools/weftlint enforces it).
package acceptance
