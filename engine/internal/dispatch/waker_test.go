package dispatch

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// woken reports whether c is closed.
func woken(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestWake_ARunsEndIsWokenOnlyByTheCommitThatEndsIt: a commit that appends
// to a run's log wakes its log's watchers, and those who await the run's end
// only when it leaves the run terminal.
func TestWake_ARunsEndIsWokenOnlyByTheCommitThatEndsIt(t *testing.T) {
	d := newTestDispatcher()
	w := d.Waker()
	log, releaseLog := w.Wait(RunKey("r"))
	defer releaseLog()
	end, releaseEnd := w.Wait(RunEndKey("r"))
	defer releaseEnd()

	d.Settle(&Effects[*task]{Run: "r"}, true)
	require.True(t, woken(log), "an append wakes the run's log")
	require.False(t, woken(end), "a step that leaves the run running does not wake its end")

	d.Settle(&Effects[*task]{Run: "r", Ended: true}, false)
	require.False(t, woken(end), "a commit that failed wakes nothing")

	d.Settle(&Effects[*task]{Run: "r", Ended: true}, true)
	require.True(t, woken(end), "the commit that ends the run wakes its end")
}

// TestWake_AnotherProcessesRunWakeUpWakesTheRunsEnd: a wake-up of a run's log
// from another process cannot say whether the run ended, so it wakes those
// who await the run's end as well as its log's watchers.
func TestWake_AnotherProcessesRunWakeUpWakesTheRunsEnd(t *testing.T) {
	d := newTestDispatcher()
	w := d.Waker()
	log, releaseLog := w.Wait(RunKey("r"))
	defer releaseLog()
	end, releaseEnd := w.Wait(RunEndKey("r"))
	defer releaseEnd()
	other, releaseOther := w.Wait(RunEndKey("s"))
	defer releaseOther()

	d.Wake(RunKey("r"))
	require.True(t, woken(log))
	require.True(t, woken(end))
	require.False(t, woken(other), "another run's end is not woken")

	queue, releaseQueue := w.Wait(QueueKey("t", "q"))
	defer releaseQueue()
	d.Wake(QueueKey("t", "q"))
	require.True(t, woken(queue))
}
