package engine

import (
	"fmt"
	"hash/fnv"
	"testing"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// A decision holds its run's lock until its commit settles, so runs that
// share a lock wait for each other's commits: 64 runs in flight take nearly
// 64 distinct locks (with 256 locks about 7 of them would share one).
func TestRunLocks_RunsInFlightRarelyShareALock(t *testing.T) {
	taken := map[int]bool{}
	for i := range 64 {
		runID := "run-" + uuid.NewSHA1(uuid.NameSpaceOID, fmt.Append(nil, i)).String()
		taken[stripe(runID, runLockStripes)] = true
	}
	require.GreaterOrEqual(t, len(taken), 61)
}

// The stripe of a key is its FNV-1a hash modulo the number of locks, for a
// string and its bytes alike.
func TestRunLocks_StripeIsFNV1a(t *testing.T) {
	for _, key := range []string{"", "run-1", "rr\x00tenant\x00req"} {
		h := fnv.New32a()
		_, _ = h.Write([]byte(key))
		require.Equal(t, int(h.Sum32()%runLockStripes), stripe(key, runLockStripes))
		require.Equal(t, stripe(key, 64), stripe([]byte(key), 64))
	}
}
