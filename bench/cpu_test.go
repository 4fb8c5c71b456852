package bench

import (
	"os"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestParseStat_ReadsNameAndTimesPastParenthesesInTheName: the command name
// may hold spaces and parentheses, so the times are counted from its last ')'.
func TestParseStat_ReadsNameAndTimesPastParenthesesInTheName(t *testing.T) {
	for _, tc := range []struct {
		line string
		name string
		secs float64
	}{
		{"42 (postgres) S 1 42 42 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 1 0", "postgres", 3.0},
		{"7 (a (b) c) R 1 7 7 0 -1 0 0 0 0 0 1 2 0 0 20 0 1 0", "a (b) c", 0.03},
	} {
		name, secs, err := parseStat([]byte(tc.line))
		require.NoError(t, err)
		require.Equal(t, tc.name, name)
		require.InDelta(t, tc.secs, secs, 1e-9)
	}
	for _, bad := range []string{"", "42 postgres S", "42 (x) S 1 2"} {
		_, _, err := parseStat([]byte(bad))
		require.Error(t, err, bad)
	}
}

// TestCommandsCPUSeconds_CountsTheNamedProcesses: this test's own process is
// found by its command name, with at least its own CPU time.
func TestCommandsCPUSeconds_CountsTheNamedProcesses(t *testing.T) {
	b, err := os.ReadFile("/proc/self/stat")
	if err != nil {
		t.Skip("no /proc on this system")
	}
	self, _, err := parseStat(b)
	require.NoError(t, err)
	own, err := cpuSeconds(os.Getpid())
	require.NoError(t, err)
	require.GreaterOrEqual(t, commandsCPUSeconds([]string{self}), own)
	require.Zero(t, commandsCPUSeconds([]string{"no-such-command-here"}))
}
