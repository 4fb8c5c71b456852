// Package reuse hands out slices in memory kept from one use to the next:
// a page's or a batch's scratch, which its owner gives out again only once
// nothing reads what the last use wrote there.
//
// Layering: it imports only the standard library.
package reuse

// Slice answers n zero values in *s's memory, growing it (and keeping what
// it grew to) when it holds fewer. More than limit values are answered in
// memory of their own, which *s does not keep.
func Slice[T any](s *[]T, n, limit int) []T {
	if n > limit {
		return make([]T, n)
	}
	if cap(*s) < n {
		*s = make([]T, n)
	}
	out := (*s)[:n]
	clear(out)
	return out
}
