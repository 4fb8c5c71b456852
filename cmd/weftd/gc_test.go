package main

import (
	"runtime/debug"
	"testing"

	"github.com/stretchr/testify/require"
)

// gcPercent answers the collector's current target.
func gcPercent() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestTuneGC_DefaultsTo200AndLeavesAGOGCTheEnvironmentSets(t *testing.T) {
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
