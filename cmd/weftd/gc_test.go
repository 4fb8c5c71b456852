package main

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"runtime/debug"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// gcPercent answers the collector's current target.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestTuneGC_DefaultsTo200AndLeavesAGOGCTheEnvironmentSets(t *testing.T) {
	t.Parallel()
	before := debug.SetGCPercent(100)
	t.Cleanup(func() { debug.SetGCPercent(before) })

	tuneGC(func(string) string { return "" })
	require.Equal(t, defaultGCPercent, gcPercent(), "no GOGC: weftd's default")

	debug.SetGCPercent(150) // as the runtime applies GOGC=150 at start
	tuneGC(func(k string) string {
		if k == "GOGC" {
			return "150"
		}
		return ""
	})
	require.Equal(t, 150, gcPercent(), "the environment's GOGC stands")
}

func TestGCPercentFor_AimsTheGoalAtTheFloorUntilBaseReachesIt(t *testing.T) {
	t.Parallel()
	const mib = 1 << 20
	cases := []struct {
		name        string
		live, floor uint64
		base, want  int
	}{
		{"a small live heap: goal at the floor", 16 * mib, 96 * mib, 200, 500},
		{"base's goal already at the floor", 32 * mib, 96 * mib, 200, 200},
		{"base's goal above the floor", 45 * mib, 96 * mib, 200, 200},
		{"live heap above the floor", 200 * mib, 96 * mib, 100, 100},
		{"an environment's larger GOGC stands", 16 * mib, 96 * mib, 800, 800},
		{"no live heap measured yet", 0, 96 * mib, 200, 200},
		{"a live heap of a few bytes: bounded", 3, 96 * mib, 200, 1 << 20},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			require.Equal(t, c.want, gcPercentFor(c.live, c.floor, c.base))
		})
	}
}

func TestGCHeapFloorOption_IsWholeMiBFromZero(t *testing.T) {
	t.Parallel()
	for text, want := range map[string]uint64{"0": 0, "96": 96 << 20, "65536": 65536 << 20} {
		got, err := gcHeapFloorOption(text)
		require.NoError(t, err, text)
		require.Equal(t, want, got, text)
	}
	for _, text := range []string{"", "-1", "1.5", "96MiB", "65537"} {
		_, err := gcHeapFloorOption(text)
		require.ErrorContains(t, err, "gc heap floor must be a whole number of MiB between 0 and 65536", text)
	}
}

// The floor is kept collection after collection: in a process of its own
// (the floor is once per process), GOGC follows the live heap after each
// collection, and a floor of 0 leaves GOGC alone.
func TestStartGCHeapFloor_SetsGOGCAfterEachCollection(t *testing.T) {
	t.Parallel()
	if floor := os.Getenv("WEFT_TEST_GC_FLOOR_CHILD"); floor != "" {
		mib, _ := strconv.Atoi(floor)
		startGCHeapFloor(uint64(mib) << 20)
		for range 3 {
			runtime.GC()
			time.Sleep(20 * time.Millisecond) // the cleanup runs on the runtime's goroutine
		}
		fmt.Printf("gogc=%d\n", gcPercent())
		return
	}
	child := func(floor string) int {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStartGCHeapFloor_SetsGOGCAfterEachCollection$")
		cmd.Env = append(os.Environ(), "WEFT_TEST_GC_FLOOR_CHILD="+floor, "GOGC=200")
		out, err := cmd.CombinedOutput()
		require.NoError(t, err, "%s", out)
		m := regexp.MustCompile(`gogc=(\d+)`).FindSubmatch(out)
		require.NotNil(t, m, "%s", out)
		p, _ := strconv.Atoi(string(m[1]))
		return p
	}
	require.Greater(t, child("512"), 2000, "a test binary's few MiB live under a 512 MiB floor")
	require.Equal(t, 200, child("0"), "no floor: the environment's GOGC")
}
