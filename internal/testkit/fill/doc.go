// Package fill sets every exported field of a value, recursively, by
// reflection — from a seeded source and pools of values a test chooses —
// so that a field added to a type later is filled too and a test that
// must see every field (a codec's round trip, a conversion, a clone) fails
// when the code under test forgets one. Change alters every leaf of a
// filled value in place. It is the one filler of the repository's tests.
//
// Layering: it may import the standard library only, so that the tests
// of every package, the engine's pure ones included, may use it.
package fill
