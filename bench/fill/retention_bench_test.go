package fill_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/bench/fill"
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/pebblestore"
)

// BenchmarkRetentionPass measures one background round (Engine.Tick, whose
// retention pass is the only one with work) over a Pebble store filled the
// way make bench-scale fills it — clones of one completed three-step run —
// when `expired` of the `stored` runs have passed their retention since the
// previous round. What it shows is that the pass's work follows the expired
// runs, not the stored ones: reads/op and commits/op are the same for 10k and
// 100k stored runs, and grow tenfold with ten times the expired runs.
//
//	go test ./bench/fill -run '^$' -bench RetentionPass -benchtime 20x
func BenchmarkRetentionPass(b *testing.B) {
	src := setup(b, time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	tmpl, err := fill.Capture(b.Context(), src.st, src.runOne(b, "template"), "template")
	require.NoError(b, err)
	keep := expiryOffset(b, src.st, tmpl)
	for _, stored := range []int{10_000, 100_000} {
		for _, expired := range []int{10, 100} {
			b.Run(fmt.Sprintf("stored=%d/expired=%d", stored, expired), func(b *testing.B) {
				benchmarkPass(b, tmpl, keep, stored, expired)
			})
		}
	}
}

func benchmarkPass(b *testing.B, tmpl *fill.Template, keep time.Duration, stored, expired int) {
	ctx := context.Background()
	pebble, err := pebblestore.Open(b.TempDir(), pebblestore.Config{})
	require.NoError(b, err)
	b.Cleanup(func() { _ = pebble.Close() })
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	_, err = fill.Fill(ctx, pebble, tmpl, fill.Options{Runs: stored, RequestPrefix: "ret", CreatedFrom: from})
	require.NoError(b, err)
	st := &countingStore{Store: pebble}
	clock := &manualClock{now: from.Add(keep - time.Millisecond)} // just before the first clone expires
	eng, err := engine.New(engine.Config{Store: st, Clock: clock})
	require.NoError(b, err)
	require.NoError(b, eng.Tick(ctx))
	st.reset()
	rounds := 0
	b.ResetTimer()
	for b.Loop() {
		if (rounds+1)*expired > stored {
			b.Fatalf("more rounds than stored runs to expire: run with a smaller -benchtime")
		}
		clock.advance(time.Duration(expired) * fill.DefaultSpacing) // `expired` more clones expire
		if err := eng.Tick(ctx); err != nil {
			b.Fatal(err)
		}
		rounds++
	}
	b.StopTimer()
	b.ReportMetric(float64(st.read.Load())/float64(rounds), "reads/op")
	b.ReportMetric(float64(st.commits.Load())/float64(rounds), "commits/op")
	left, err := pebble.Scan(ctx, &store.ScanParams{Prefix: keyspace.Expiry.KeyPrefix(), Limit: store.MaxScanLimit})
	require.NoError(b, err)
	if stored <= store.MaxScanLimit {
		require.Len(b, left.Items, stored-rounds*expired, "each round removed exactly the runs that expired")
	}
}

// expiryOffset answers how long after its creation the template run
// expires: its rx: entry's time less its creation.
func expiryOffset(b *testing.B, st store.Store, tmpl *fill.Template) time.Duration {
	res, err := st.Scan(context.Background(), &store.ScanParams{Prefix: keyspace.Expiry.KeyPrefix()})
	require.NoError(b, err)
	require.Len(b, res.Items, 1, "the finished template run is indexed for retention")
	parts, err := store.SplitKey(res.Items[0].Key)
	require.NoError(b, err)
	at, err := store.ParseTime(parts[1])
	require.NoError(b, err)
	return at.Sub(tmpl.CreatedAt())
}

// countingStore counts the records a pass reads and the batches it commits.
type countingStore struct {
	store.Store
	read, commits atomic.Int64
}

func (c *countingStore) reset() { c.read.Store(0); c.commits.Store(0) }

func (c *countingStore) Get(ctx context.Context, key []byte) (store.Item, error) {
	c.read.Add(1)
	return c.Store.Get(ctx, key)
}

func (c *countingStore) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	res, err := c.Store.Scan(ctx, p)
	if err == nil {
		c.read.Add(int64(len(res.Items)))
	}
	return res, err
}

func (c *countingStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	c.commits.Add(1)
	return c.Store.Commit(ctx, b)
}

// manualClock is moved by hand.
type manualClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *manualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *manualClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}
