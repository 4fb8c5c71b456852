package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestCitationsIn_DocumentsOutsideTheRepository(t *testing.T) {
	for _, tc := range []struct {
		line string
		want bool
	}{
		{"// the rule (spec 003 §2) says", true},
		{"// spec 000's defaults", true},
		{"see DESIGN.md §4", true},
		{"`shared/DESIGN.md` is the architecture", true},
		{"The five documents in `shared/spec/` name", true},
		{"see shared/spec/README.md", true},
		{"// docs/semantics.md#signal-idempotency", false},
		{"a shared/exclusive lock", true},
		{"x := sharedState", false},
		{"path: /var/lib/weft-shared/x", false},
		{"the specification 003 is", false},
		{"DESIGNS.md", false},
	} {
		got := citationsIn("f.go", []byte("package p\n"+tc.line+"\n"))
		require.Equal(t, tc.want, len(got) == 1, tc.line)
		if tc.want {
			require.Equal(t, "f.go:2", got[0].where)
		}
	}
}

func TestCitationsIn_BinaryFilesAreSkipped(t *testing.T) {
	require.Empty(t, citationsIn("x.png", []byte("\x89PNG\x00 spec 001")))
}

func TestAnchorsOf_ExplicitIDsAndHeadingSlugs(t *testing.T) {
	got := anchorsOf([]byte("# Title\n\n<a id=\"signal-idempotency\"></a>\n## Faults (`weft.v1.Fault`, `weft.v1.FaultCode`)\n### Legal run transitions\n#### Step 2: done\n"))
	for _, want := range []string{"title", "signal-idempotency", "faults-weftv1fault-weftv1faultcode", "legal-run-transitions", "step-2-done"} {
		require.True(t, got[want], want)
	}
	require.False(t, got["signal"])
}
