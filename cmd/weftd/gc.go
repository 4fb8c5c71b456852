package main

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strconv"
	"sync"
)

// defaultGCPercent is weftd's GOGC unless the environment sets one. Go's
// default of 100 spent about a tenth of weftd's CPU collecting garbage under
// load; at 200 weftd spent 10–13% less CPU per step, cluster and embedded, for
// about 20 MiB more resident memory (112 MiB peak with 100k active runs
// against 87), measured in docs/performance.md.
const defaultGCPercent = 200

// tuneGC sets the garbage collector's target to defaultGCPercent unless GOGC
// is set, which Go's runtime has then applied already.
func tuneGC(getenv func(string) string) {
	if getenv("GOGC") == "" {
		debug.SetGCPercent(defaultGCPercent)
	}
}

// defaultGCHeapFloorMiB is the heap the collector lets weftd reach before it
// collects, however little of it is live. A busy weftd keeps little alive
// (about 15 MiB at 2,000 steps/s) and allocates quickly, so at GOGC=200
// alone it collected four times a second, and a collection's fixed costs
// and its marking on idle processors were about a sixth of its CPU. 64 MiB
// took a third of that away and left weftd's memory with 100k active runs
// where docs/performance.md had it; 96 took two thirds for 34 MiB more
// there ("The collector's heap floor"). A live heap whose GOGC goal is over
// the floor is collected at GOGC, as before.
const defaultGCHeapFloorMiB = 64

// maxGCHeapFloorMiB bounds the option.
const maxGCHeapFloorMiB = 64 << 10

// gcHeapFloorOption reads --gc-heap-floor-mib: a whole number of MiB, 0 for
// none.
func gcHeapFloorOption(text string) (uint64, error) {
	mib, err := strconv.Atoi(text)
	if err != nil || mib < 0 || mib > maxGCHeapFloorMiB {
		return 0, fmt.Errorf("gc heap floor must be a whole number of MiB between 0 and %d, got %q", maxGCHeapFloorMiB, text)
	}
	return uint64(mib) << 20, nil
}

// heapFloor keeps the collector's heap goal at floor bytes or above: after
// each collection it sets GOGC so that the next goal is the floor while the
// live heap is small, and base (weftd's or the environment's GOGC) once
// base alone reaches it. A memory limit (GOMEMLIMIT) still bounds the goal.
//
// One adjustment is outstanding at a time — each arms the next — so they
// never overlap and share sample without a lock.
type heapFloor struct {
	floor  uint64
	base   int
	sample []metrics.Sample
}

// startGCHeapFloor keeps the heap goal at floor bytes or above from now on;
// a floor of 0, or a collector turned off (GOGC=off), does nothing. Only a
// process's first call does anything (tests run weftd in-process many
// times).
func startGCHeapFloor(floor uint64) {
	gcHeapFloorOnce.Do(func() {
		gogc := []metrics.Sample{{Name: "/gc/gogc:percent"}}
		metrics.Read(gogc)
		base := int(gogc[0].Value.Uint64())
		if floor == 0 || base <= 0 { // GOGC=off reads as 0
			return
		}
		h := &heapFloor{floor: floor, base: base, sample: []metrics.Sample{{Name: "/gc/heap/live:bytes"}}}
		h.adjust()
	})
}

var gcHeapFloorOnce sync.Once

// adjust sets GOGC for the live heap the last collection found, and asks to
// be called again after the next one.
func (h *heapFloor) adjust() {
	metrics.Read(h.sample)
	debug.SetGCPercent(gcPercentFor(h.sample[0].Value.Uint64(), h.floor, h.base))
	// A cleanup runs once the object it watches is collected: the next
	// collection. The object holds a pointer, so it is never tiny-allocated
	// alongside others that would keep it alive.
	sentinel := &struct{ _ *heapFloor }{}
	runtime.AddCleanup(sentinel, (*heapFloor).adjust, h)
}

// gcPercentFor answers the GOGC whose goal for a live heap of live bytes is
// floor, or base when base's goal is at least the floor. The goal GOGC sets
// is live + live*GOGC/100.
func gcPercentFor(live, floor uint64, base int) int {
	if live == 0 || live >= floor {
		return base
	}
	const most = 1 << 20 // a live heap of a few bytes would ask for more
	p := min((floor-live)*100/live, most)
	return max(base, int(p))
}
