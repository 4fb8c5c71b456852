// Package lease holds run-ownership leases: claims on a name that expire
// unless their owner renews them. A lease only avoids wasted work; it never
// decides correctness, which rests on the fencing epoch and the conditional
// batches in the store (docs/semantics.md#fencing).
//
// It holds the interface, an in-process implementation for the embedded
// deployment, and Keeper, which holds many leases of one owner while they
// are in use, renews them from one goroutine and reports each one's loss.
// Backends live beside it (redislease). It imports only the standard library.
package lease
