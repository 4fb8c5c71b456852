package flowcontrol

import (
	"fmt"
	"testing"
	"time"
)

func BenchmarkTake(b *testing.B) {
	th, _ := NewThrottle(Rate{Count: 100, Period: time.Minute}, 10)
	var bk Bucket
	now := epoch
	for b.Loop() {
		now = now.Add(time.Second)
		bk, _ = th.Take(bk, now)
	}
}

func BenchmarkPick100Keys(b *testing.B) {
	heads := make([]Head, 100)
	for i := range heads {
		heads[i] = Head{Key: fmt.Sprintf("k%d", i), Priority: 1 + i%5, Weight: 1, Seq: uint64(i), Finish: uint64(i * 1000)}
	}
	v := func(int) uint64 { return 500 }
	for b.Loop() {
		if Pick(heads, v) < 0 {
			b.Fatal("none")
		}
	}
}
