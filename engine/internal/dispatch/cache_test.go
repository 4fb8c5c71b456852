package dispatch

import "testing"

func TestRecentCacheIsBoundedAndKeepsWhatIsUsed(t *testing.T) {
	c := NewRecent[int](4)
	for i := range 100 {
		c.Put(string(rune('a'+i%26))+string(rune(i)), i)
		if n := c.Len(); n > 8 {
			t.Fatalf("after %d puts the cache holds %d entries, more than two generations of 4", i+1, n)
		}
	}
	c = NewRecent[int](4)
	c.Put("hot", 1)
	for i := range 100 {
		c.Put(string(rune('A'+i)), i)
		if _, ok := c.Get("hot"); !ok {
			t.Fatalf("a key read after every put was evicted after %d puts", i+1)
		}
	}
	c.Remove("hot")
	if _, ok := c.Get("hot"); ok {
		t.Fatal("removed key still answered")
	}
}

func TestRecentCacheForgetsADroppedGenerationWhoseMapItReuses(t *testing.T) {
	c := NewRecent[int](2)
	c.Put("a", 1)
	c.Put("b", 2)
	c.Put("c", 3) // a, b become the older generation
	c.Put("d", 4)
	c.Put("e", 5) // a, b are dropped; their map becomes the current one
	for _, k := range []string{"a", "b"} {
		if v, ok := c.Get(k); ok {
			t.Fatalf("key %q of a dropped generation is still answered (%d)", k, v)
		}
	}
	for k, want := range map[string]int{"c": 3, "d": 4, "e": 5} {
		if v, ok := c.Get(k); !ok || v != want {
			t.Fatalf("key %q answered %d, %v; want %d", k, v, ok, want)
		}
	}
}

func TestRecentCacheTurnsOverWithoutAllocating(t *testing.T) {
	c := NewRecent[int](64)
	keys := make([]string, 1024)
	for i := range keys {
		keys[i] = string(rune(0x4e00 + i))
	}
	for _, k := range keys { // both generations' maps exist and have grown
		c.Put(k, 1)
	}
	allocs := testing.AllocsPerRun(10, func() {
		for _, k := range keys {
			c.Put(k, 2)
		}
	})
	if allocs != 0 {
		t.Fatalf("a full cache turning over allocated %.0f times per 1,024 puts; want 0", allocs)
	}
}
