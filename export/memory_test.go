package export_test

import (
	"bytes"
	"context"
	"fmt"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
)

// inFlight tracks, pass by pass, the messages a worker handed its
// publisher whose page is not done yet — as the publisher got them,
// sharing their memory, and as they were then — and checks, at every
// publish, scan and commit of every pass, that none of them changed: the
// memory a worker reuses is never that of a page still in flight. A pass's
// page is done when the pass scans again (its next page, after the
// acknowledgement) or returns.
type inFlight struct {
	t    *testing.T
	mu   sync.Mutex
	msgs map[int][]flying // by pass
	seen int
}

type flying struct {
	shared []byte // msg.Event as handed over
	copied []byte
}

// passKey is the context key of the pass a call comes from.
type passKey struct{}

func passOf(ctx context.Context) int { id, _ := ctx.Value(passKey{}).(int); return id }

// check checks every page in flight, and forgets the page of pass done.
func (f *inFlight) check(done int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for pass, ms := range f.msgs {
		for _, m := range ms {
			if !bytes.Equal(m.shared, m.copied) {
				f.t.Errorf("pass %d: an event's JSON was overwritten while in flight", pass)
			}
		}
	}
	if done != 0 {
		delete(f.msgs, done)
	}
}

type watchedStore struct {
	store.Store
	f *inFlight
}

func (s *watchedStore) Scan(ctx context.Context, params *store.ScanParams) (*store.ScanResult, error) {
	s.f.check(passOf(ctx))
	return s.Store.Scan(ctx, params)
}

func (s *watchedStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	s.f.check(0)
	defer s.f.check(0)
	return s.Store.Commit(ctx, b)
}

// watchingPublisher tells f what it publishes to the bus, which copies it.
type watchingPublisher struct {
	bus *export.MemoryBus
	f   *inFlight
}

func (p *watchingPublisher) Publish(ctx context.Context, msg export.Message) error {
	p.f.check(0)
	p.f.mu.Lock()
	p.f.msgs[passOf(ctx)] = append(p.f.msgs[passOf(ctx)], flying{shared: msg.Event, copied: bytes.Clone(msg.Event)})
	p.f.seen++
	p.f.mu.Unlock()
	return p.bus.Publish(ctx, msg)
}

type watchingBatchPublisher struct{ *watchingPublisher }

func (p watchingBatchPublisher) PublishBatch(ctx context.Context, msgs []export.Message) (int, error) {
	for i, m := range msgs {
		if err := p.Publish(ctx, m); err != nil {
			return i, err
		}
	}
	return len(msgs), nil
}

// The memory a worker resolves and publishes a page in is reused by its
// next page and its next pass, and by none of them before the page is
// published and acknowledged; two passes of one worker at once each have
// their own.
func TestWorker_ReusesAPagesMemoryOnlyOnceThePageIsDone(t *testing.T) {
	t.Parallel()
	for _, batching := range []bool{false, true} {
		for _, passes := range []int{1, 2} {
			t.Run(fmt.Sprintf("batching=%v/passes=%d", batching, passes), func(t *testing.T) {
				f := &inFlight{t: t, msgs: map[int][]flying{}}
				st := &watchedStore{Store: memStore(t), f: f}
				refs := writeOutbox(t, st, 40, 12)
				bus := export.NewMemoryBus(export.WithMaxLen(100_000))
				var pub export.Publisher = &watchingPublisher{bus: bus, f: f}
				if batching {
					pub = watchingBatchPublisher{pub.(*watchingPublisher)}
				}
				w, err := export.NewWorker(st, pub, export.Config{BatchSize: 7})
				require.NoError(t, err)
				var wg sync.WaitGroup
				for pass := 1; pass <= passes; pass++ { // at once, on one worker
					ctx := context.WithValue(context.Background(), passKey{}, pass)
					wg.Go(func() {
						for {
							stats, err := w.RunOnce(ctx)
							f.check(pass)
							if err != nil || stats.Seen == 0 {
								return
							}
						}
					})
				}
				wg.Wait()
				drain(t, w)
				requireAllDelivered(t, st, refs, bus.Messages())
				require.GreaterOrEqual(t, f.seen, len(refs))
			})
		}
	}
}
