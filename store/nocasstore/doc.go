// Package nocasstore is a test backend that declares conditionalBatch: false.
// It wraps any store.Store (by default a fresh memstore) and rejects every
// batch that carries conditions with a *store.CapabilityError, so the
// fail-fast paths of docs/semantics.md#capabilities-fail-fast (idempotent signals, CAS checkpoints,
// reconciliation claims on a backend without compare-and-set) can be proven.
// It never emulates conditions by reading first.
//
// Layering: imports store and store/memstore only.
package nocasstore
