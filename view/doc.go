// Package view keeps each tenant's saved views of the runs list: a named
// query of the run query language with the list's other filters, saved by
// one person and listed for everyone in the tenant
// (docs/semantics.md#saved-views).
//
// A view is one JSON record under view:{tenant}:{name}, so a tenant's views
// list by name with one scan and a view's name is its identity: saving a
// name again replaces that view (the last save wins), and saving the same
// view again leaves it as it was. A save or a delete is one batch, which
// carries the call's audit record with it (store.Ride).
//
// Layering: it uses the store contract, engine/keyspace for its prefix and
// the standard library; the server imports it, the engine never does.
package view
