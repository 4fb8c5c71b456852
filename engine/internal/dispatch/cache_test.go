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
