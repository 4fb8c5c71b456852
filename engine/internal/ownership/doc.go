// Package ownership holds checkpoint ownership
// (docs/semantics.md#checkpoint-ownership): the modes that say how the
// engine makes sure only one writer changes a run at a time, the fail-fast
// check of a mode against the store's capabilities, the commit that checks
// a batch's conditions by reading where the store cannot, and the tenure
// whose fence stops an owner that another engine took a run over from.
//
// It knows nothing of runs beyond the epoch a decision reads; the engine
// takes the run's lease, decides, and asks the tenure whether it may
// commit.
//
// Layering: it may import the standard library and the store contract
// (package store) only (tools/weftlint enforces it).
package ownership
