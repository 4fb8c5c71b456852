package main

import (
	"os/exec"
	"strings"
	"testing"
)

// The CLI speaks to a weftd over the public API: its binary links neither
// the server (nor, through it, the engine and the embedded console) nor the
// engine itself. It reads a YAML definition with engine/definition and
// converts it with engine/eventpb, both below the engine.
func TestCLI_LinksNeitherTheServerNorTheEngine(t *testing.T) {
	t.Parallel()
	out, err := exec.Command("go", "list", "-deps", ".").Output()
	if err != nil {
		t.Fatalf("go list -deps: %v", err)
	}
	const module = "github.com/weft-dev/weft/"
	for _, p := range strings.Fields(string(out)) {
		switch p {
		case module + "server", module + "engine", module + "console":
			t.Errorf("cmd/weft links %s", p)
		}
	}
}
