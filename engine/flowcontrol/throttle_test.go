package flowcontrol

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// epoch is the injected clock's start.
var epoch = time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)

func TestThrottle_BurstThenTheRate(t *testing.T) {
	t.Parallel()
	th, err := NewThrottle(Rate{Count: 20, Period: time.Second}, 5)
	require.NoError(t, err)
	var b Bucket
	require.Equal(t, 5, th.Tokens(b, epoch), "a fresh bucket is full")
	for i := range 5 {
		var d Decision
		b, d = th.Take(b, epoch)
		require.True(t, d.Allowed, "burst task %d", i)
		require.Equal(t, 4-i, d.Tokens)
	}
	held, d := th.Take(b, epoch)
	require.False(t, d.Allowed, "the sixth task at once waits")
	require.Equal(t, b, held, "a task held back leaves the bucket as it was")
	require.Equal(t, epoch.Add(50*time.Millisecond), d.RetryAt, "one interval (1s/20) later")
	require.Equal(t, d.RetryAt, th.NextRelease(b, epoch))
	_, d = th.Take(b, d.RetryAt.Add(-time.Nanosecond))
	require.False(t, d.Allowed)
	_, d = th.Take(b, epoch.Add(50*time.Millisecond))
	require.True(t, d.Allowed, "and goes when told to")
	require.Equal(t, 5, th.Tokens(b, epoch.Add(time.Hour)), "a quiet spell refills to the burst, no more")
}

func TestThrottle_BucketStoredFormRoundTrips(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		b := Bucket{TAT: rapid.Int64().Draw(t, "tat")}
		data, err := b.MarshalBinary()
		if err != nil {
			t.Fatal(err)
		}
		var back Bucket
		if err := back.UnmarshalBinary(data); err != nil || back != b {
			t.Fatalf("%v → %x → %v, %v", b, data, back, err)
		}
	})
	var b Bucket
	require.Error(t, b.UnmarshalBinary([]byte{2, 0, 0, 0, 0, 0, 0, 0, 0}))
	require.Error(t, b.UnmarshalBinary(nil))
}

// genThrottle draws a throttle.
func genThrottle(t *rapid.T) Throttle {
	rate := Rate{Count: rapid.IntRange(1, 1000).Draw(t, "count"), Period: time.Duration(rapid.IntRange(1, 3600).Draw(t, "seconds")) * time.Second}
	th, err := NewThrottle(rate, rapid.IntRange(1, 50).Draw(t, "burst"))
	if err != nil {
		t.Fatal(err)
	}
	return th
}

func TestThrottle_NeverExceedsTheRateOverAnyWindow(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		th := genThrottle(t)
		iv := th.Rate().Interval()
		var b Bucket
		now := epoch
		var admitted []time.Time
		for range rapid.IntRange(1, 300).Draw(t, "requests") {
			// The clock mostly moves on, sometimes stands still, and sometimes goes back (another process's clock).
			step := time.Duration(rapid.Int64Range(-int64(iv), 3*int64(iv)).Draw(t, "step"))
			now = now.Add(step)
			var d Decision
			b, d = th.Take(b, now)
			if d.Allowed {
				admitted = append(admitted, now)
			}
		}
		tau := iv * time.Duration(th.Burst()-1)
		for i := range admitted {
			for k := i + 1; k < len(admitted); k++ {
				// k-i tasks after the i-th need (k-i) intervals, less the burst's head start.
				if time.Duration(k-i)*iv > admitted[k].Sub(admitted[i])+tau {
					t.Fatalf("%d tasks between %v and %v at %v with burst %d", k-i+1, admitted[i], admitted[k], th.Rate(), th.Burst())
				}
			}
		}
	})
}

func TestThrottle_ABacklogGetsTheFullRate(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		th := genThrottle(t)
		var b Bucket
		now := epoch
		n := rapid.IntRange(1, 500).Draw(t, "tasks")
		for i := range n {
			var d Decision
			b, d = th.Take(b, now)
			if !d.Allowed {
				if !d.RetryAt.After(now) {
					t.Fatalf("held back until %v at %v", d.RetryAt, now)
				}
				now = d.RetryAt // the waiting task comes back when told
				b, d = th.Take(b, now)
				if !d.Allowed {
					t.Fatalf("task %d refused at its retry time", i)
				}
			}
		}
		// n tasks in a backlog take exactly the intervals beyond the burst: capacity is never stranded.
		want := time.Duration(max(0, n-th.Burst())) * th.Rate().Interval()
		if got := now.Sub(epoch); got != want {
			t.Fatalf("%d tasks took %v, want %v", n, got, want)
		}
	})
}

func TestBucket_IdleOnceItsArrivalTimeHasPassed(t *testing.T) {
	now := time.Unix(100, 0)
	require.True(t, Bucket{}.Idle(now))
	require.True(t, Bucket{TAT: now.UnixNano()}.Idle(now))
	require.False(t, Bucket{TAT: now.UnixNano() + 1}.Idle(now))
}
