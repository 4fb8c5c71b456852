// Package keyspace is the one registry of the store's key prefixes: every
// kind of record Weft keeps has its Prefix here — its name (the key's first
// component), the package that owns its records, what a record holds, and
// how its keys sort — and every key is built through it. Nothing else spells
// a prefix; docs/persisted-format.md lists exactly this set (its test
// checks both).
//
// Layering: imports store (the key codec) and the standard library only, so
// that every package that keeps records — the engine's, export, schedule,
// the benchmark's filler — may import it.
package keyspace
