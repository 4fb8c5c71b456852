// Package memstore is the in-memory store.Store: the reference semantics of the
// storage contract, and the backend for fast tests.
//
// It keeps every record in a map plus a sorted key index behind one
// sync.RWMutex, so commits are serialised (conditional batches are
// linearizable) and every Get and Scan sees whole batches only. Versions come
// from one store-wide counter that each commit advances, so a key's version is
// never reused, even after it is deleted and written again. Nothing survives
// the process: Capabilities.Durable is false.
//
// Layering: imports store and the standard library only.
package memstore
