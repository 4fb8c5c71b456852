package main

import "runtime/debug"

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
