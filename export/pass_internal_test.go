package export

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/keyspace"
)

// runKey tells the runs of outbox keys apart as SplitKey would, without
// decoding them: one value for every entry of a run, another for each other
// run (escaped separators included), the whole key for a malformed one.
func TestRunKey_IsOneValuePerRunAndTheWholeKeyOtherwise(t *testing.T) {
	t.Parallel()
	a1, a2 := OutboxKey("a", 1), OutboxKey("a", 2)
	colon := OutboxKey("a:b", 1)
	require.Equal(t, string(runKey(a1)), string(runKey(a2)))
	require.Equal(t, string(keyspace.Outbox.KeyPrefix("a")[:len(keyspace.Outbox.KeyPrefix("a"))-1]), string(runKey(a1)))
	require.NotEqual(t, string(runKey(a1)), string(runKey(colon)))
	require.NotEqual(t, string(runKey(OutboxKey("a%", 1))), string(runKey(a1)))
	for _, malformed := range []string{"ob:only", "ob:a:1:extra", "junk"} {
		require.Equal(t, malformed, string(runKey([]byte(malformed))))
	}
}
