package wake_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/wake"
)

// recorder is a send function that records its batches and, while gated,
// blocks each send until the test opens the gate.
type recorder struct {
	mu      sync.Mutex
	batches [][]string
	entered chan struct{} // one value per send started
	gate    chan struct{} // closed: sends return
	fail    int           // the next fail sends answer an error
}

func newRecorder() *recorder {
	return &recorder{entered: make(chan struct{}, 1024), gate: make(chan struct{})}
}

func (r *recorder) send(ctx context.Context, keys []string) error {
	r.entered <- struct{}{}
	select {
	case <-r.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.fail > 0 {
		r.fail--
		return errors.New("injected send failure")
	}
	r.batches = append(r.batches, append([]string(nil), keys...))
	return nil
}

// sent answers every key sent, with how often.
func (r *recorder) sent() map[string]int {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]int{}
	for _, b := range r.batches {
		for _, k := range b {
			out[k]++
		}
	}
	return out
}

func (r *recorder) largestBatch() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, b := range r.batches {
		n = max(n, len(b))
	}
	return n
}

// setup starts a batcher over r, stopped when the test ends.
func setup(t *testing.T, cfg wake.BatcherConfig, r *recorder) *wake.Batcher {
	t.Helper()
	b, err := wake.NewBatcher(cfg, r.send)
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); b.Run(ctx) }()
	t.Cleanup(func() { cancel(); <-done })
	return b
}

// waitEntered waits for the next send to start.
func (r *recorder) waitEntered(t *testing.T) {
	t.Helper()
	select {
	case <-r.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("no send started")
	}
}

// eventually waits for cond, failing after a generous bound.
func eventually(t *testing.T, cond func() bool, msg string) {
	t.Helper()
	require.Eventually(t, cond, 10*time.Second, time.Millisecond, msg)
}

func keys(prefix string, n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s-%d", prefix, i)
	}
	return out
}

func TestBatcher_ManyAddsDuringASendGoOutInFewBatches(t *testing.T) {
	t.Parallel()
	r := newRecorder()
	b := setup(t, wake.BatcherConfig{MaxBatch: 100, Buffer: 1000}, r)
	b.Add([]string{"first"})
	r.waitEntered(t) // the first send is in flight and blocked
	for _, k := range keys("key", 500) {
		b.Add([]string{k, k}) // each twice: a pending key is sent once
		b.Add([]string{k})
	}
	close(r.gate)
	eventually(t, func() bool { return len(r.sent()) == 501 }, "every key is sent")
	for k, n := range r.sent() {
		require.Equal(t, 1, n, "key %s sent more than once", k)
	}
	st := b.Stats()
	require.Equal(t, uint64(501), st.Keys)
	require.LessOrEqual(t, st.Sends, uint64(1+5), "1,501 adds of 501 keys take the first send and five batches of 100")
	require.LessOrEqual(t, r.largestBatch(), 100)
	require.Zero(t, st.Dropped)
}

func TestBatcher_KeysAddedTogetherShareASend(t *testing.T) {
	t.Parallel()
	r := newRecorder()
	close(r.gate)
	b := setup(t, wake.BatcherConfig{Linger: time.Second}, r)
	b.Add(keys("a", 10))
	b.Add(keys("b", 10))
	eventually(t, func() bool { return len(r.sent()) == 20 }, "every key is sent")
	require.Equal(t, uint64(1), b.Stats().Sends, "keys added within the linger go in one send")
}

func TestBatcher_AFullBufferDropsKeysWithoutBlocking(t *testing.T) {
	t.Parallel()
	r := newRecorder()
	b := setup(t, wake.BatcherConfig{MaxBatch: 10, Buffer: 100}, r)
	b.Add([]string{"first"})
	r.waitEntered(t)
	added := make(chan struct{})
	go func() {
		defer close(added)
		for _, k := range keys("key", 150) {
			b.Add([]string{k})
		}
	}()
	select {
	case <-added: // while the send is still blocked
	case <-time.After(10 * time.Second):
		t.Fatal("Add blocked on a full buffer")
	}
	st := b.Stats()
	require.Equal(t, uint64(50), st.Dropped, "the buffer holds 100 keys; the other 50 are dropped")
	require.Equal(t, uint64(101), st.Keys)
	close(r.gate)
	eventually(t, func() bool { return len(r.sent()) == 101 }, "the buffered keys are sent")
	require.NotContains(t, r.sent(), "key-149")
	b.Add([]string{"after"})
	eventually(t, func() bool { return r.sent()["after"] == 1 }, "keys are taken again once there is room")
}

func TestBatcher_AFailedSendLosesOnlyItsKeys(t *testing.T) {
	t.Parallel()
	r := newRecorder()
	r.fail = 1
	close(r.gate)
	b := setup(t, wake.BatcherConfig{}, r)
	b.Add([]string{"lost"})
	eventually(t, func() bool { return b.Stats().Failed == 1 }, "the first send fails")
	b.Add([]string{"kept"})
	eventually(t, func() bool { return r.sent()["kept"] == 1 }, "later sends go on")
	require.NotContains(t, r.sent(), "lost", "a failed send is not retried: wake-ups are hints")
}

func TestBatcher_AddBeforeRunNeverBlocks(t *testing.T) {
	t.Parallel()
	b, err := wake.NewBatcher(wake.BatcherConfig{MaxBatch: 1, Buffer: 4}, func(context.Context, []string) error { return nil })
	require.NoError(t, err)
	b.Add(keys("k", 10)) // nothing sends: the buffer fills, the rest drops
	require.Equal(t, wake.BatcherStats{Keys: 4, Dropped: 6}, b.Stats())
}

func TestBatcherConfig_IsValidated(t *testing.T) {
	t.Parallel()
	send := func(context.Context, []string) error { return nil }
	for _, tc := range []struct {
		cfg  wake.BatcherConfig
		want string
	}{
		{wake.BatcherConfig{Linger: 2 * time.Second}, "wake linger must be at most 1s, got 2s"},
		{wake.BatcherConfig{MaxBatch: -1}, "wake batch must hold at least 1 key, got -1"},
		{wake.BatcherConfig{MaxBatch: 10, Buffer: 5}, "wake buffer must hold at least a batch (10 keys), got 5"},
	} {
		_, err := wake.NewBatcher(tc.cfg, send)
		require.EqualError(t, err, tc.want)
	}
}

// TestBatcher_HeldKeysWaitForReleaseOrTheFirstKeyAfterTheHold: while held,
// added keys start no send; Release sends them, and so does the first Add
// after the hold has ended, with its own key.
func TestBatcher_HeldKeysWaitForReleaseOrTheFirstKeyAfterTheHold(t *testing.T) {
	t.Parallel()
	r := newRecorder()
	close(r.gate)
	b := setup(t, wake.BatcherConfig{MaxBatch: 2, Buffer: 100}, r)

	b.Hold(time.Now().Add(time.Hour))
	b.Add(keys("held", 5)) // more than a batch: not even a full batch is sent
	require.Zero(t, b.Stats().Sends)
	b.Release()
	eventually(t, func() bool { return len(r.sent()) == 5 }, "Release sends what was held")

	b.Hold(time.Now().Add(-time.Millisecond)) // a hold that has ended
	b.Add([]string{"after"})
	eventually(t, func() bool { return r.sent()["after"] == 1 }, "a key after the hold is sent")
}

// TestBatcher_AKickFromBeforeAHoldSendsNothingTheHoldKeeps: keys added while
// a send is in flight kick the sender; a hold that starts before the sender
// takes them keeps them (and the keys added after it) until Release. A
// process that found itself alone on its wake-up channel must not publish to
// nobody the keys a process about to join would miss for good.
func TestBatcher_AKickFromBeforeAHoldSendsNothingTheHoldKeeps(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		r := newRecorder()
		b := setup(t, wake.BatcherConfig{}, r)
		b.Add([]string{"first"})
		<-r.entered // the first send is in flight
		b.Add([]string{"kicked"})
		b.Hold(time.Now().Add(time.Hour))
		b.Add([]string{"held"})
		close(r.gate)
		settle := func() { time.Sleep(time.Second); synctest.Wait() } // the bubble's clock: past any linger
		settle()
		require.Equal(t, map[string]int{"first": 1}, r.sent(), "nothing the hold keeps is sent")
		b.Release()
		settle()
		require.Equal(t, map[string]int{"first": 1, "kicked": 1, "held": 1}, r.sent(), "Release sends what the hold kept")
	})
}
