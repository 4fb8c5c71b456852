package reuse

import (
	"testing"
	"unsafe"
)

// A slice is answered zeroed in the kept memory, which grows to the largest
// size asked for within the limit; beyond it the memory is the answer's own.
func TestSlice_ZeroesAndKeepsMemoryWithinItsLimit(t *testing.T) {
	var kept []int
	a := Slice(&kept, 4, 8)
	for i := range a {
		a[i] = i + 1
	}
	b := Slice(&kept, 3, 8)
	if unsafe.SliceData(a) != unsafe.SliceData(b) {
		t.Fatal("a smaller slice is not answered in the kept memory")
	}
	for _, v := range b {
		if v != 0 {
			t.Fatalf("reused memory not zeroed: %v", b)
		}
	}
	c := Slice(&kept, 6, 8)
	if cap(kept) < 6 || unsafe.SliceData(c) != unsafe.SliceData(kept) {
		t.Fatal("grown memory is not kept")
	}
	d := Slice(&kept, 9, 8)
	if len(d) != 9 || unsafe.SliceData(d) == unsafe.SliceData(kept) || cap(kept) >= 9 {
		t.Fatal("a slice over the limit must be its own memory, not kept")
	}
}
