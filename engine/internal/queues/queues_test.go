package queues

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/internal/record"
)

// TestPacer_DueAtMostOncePerInterval: the sweep of expired poller records
// runs at most once per interval, and again once the interval has passed.
func TestPacer_DueAtMostOncePerInterval(t *testing.T) {
	var p Pacer
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	require.True(t, p.due(t0, time.Minute), "the first ask is due")
	require.False(t, p.due(t0.Add(59*time.Second), time.Minute), "within the interval")
	require.True(t, p.due(t0.Add(time.Minute), time.Minute), "the interval has passed")
	require.False(t, p.due(t0.Add(time.Minute+time.Second), time.Minute), "paced from the last due")
}

// TestReadyEntryTime_IsTheEntrysNotBeforeAndZeroForAKeyItCannotRead: a
// queue's oldest ready task is read from its first ready entry's key.
func TestReadyEntryTime_IsTheEntrysNotBeforeAndZeroForAKeyItCannotRead(t *testing.T) {
	at := time.Date(2026, 3, 4, 5, 6, 7, 8_000_000, time.UTC)
	require.Equal(t, at, readyEntryTime(record.ReadyTaskKey("t", "q", at, 7, "task-1")))
	require.True(t, readyEntryTime([]byte("op")).IsZero(), "too few parts")
	require.True(t, readyEntryTime(nil).IsZero(), "no key")
}
