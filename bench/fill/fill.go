package fill

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/binary"
	"errors"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"

	"github.com/weft-dev/weft/store"
)

// Defaults.
const (
	// DefaultBatchRuns is how many clones' records of one group one Commit
	// writes.
	DefaultBatchRuns = 500
	// DefaultSpacing separates the creation times of consecutive clones.
	DefaultSpacing = time.Millisecond
)

// Options says how many clones Fill writes and how.
type Options struct {
	// Runs is how many clones to write.
	Runs int
	// RequestPrefix starts every clone's run_request_id, which ends with the
	// clone's number; it must be unique to this fill.
	RequestPrefix string
	// CreatedFrom is the first clone's creation time; each next one is
	// Spacing later (default DefaultSpacing).
	CreatedFrom time.Time
	Spacing     time.Duration
	// BatchRuns is how many clones one Commit writes (default
	// DefaultBatchRuns); Renderers render batches in parallel (default
	// GOMAXPROCS).
	BatchRuns, Renderers int
	// Samples is how many clones' identities Result keeps, spread over the
	// fill, for checking them afterwards (default 3).
	Samples int
	// Progress, when set, is called after each commit with the clones whose
	// records are all written.
	Progress func(written int)
}

func (o Options) withDefaults() Options {
	if o.Spacing == 0 {
		o.Spacing = DefaultSpacing
	}
	if o.BatchRuns == 0 {
		o.BatchRuns = DefaultBatchRuns
	}
	if o.Renderers == 0 {
		o.Renderers = runtime.GOMAXPROCS(0)
	}
	if o.Samples == 0 {
		o.Samples = 3
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Runs < 0:
		return fmt.Errorf("runs must not be negative, got %d", o.Runs)
	case o.RequestPrefix == "" || !plain(o.RequestPrefix):
		return fmt.Errorf("request prefix must be plain (letters, digits, . _ / -), got %q", o.RequestPrefix)
	case o.CreatedFrom.IsZero():
		return errors.New("the first clone's creation time is required")
	case o.Spacing < time.Millisecond:
		return fmt.Errorf("spacing must be at least 1ms (the engine's timestamps are milliseconds), got %s", o.Spacing)
	case o.BatchRuns < 1 || o.Renderers < 1:
		return fmt.Errorf("batch runs and renderers must be at least 1, got %d and %d", o.BatchRuns, o.Renderers)
	}
	return nil
}

// Result is what Fill wrote.
type Result struct {
	Runs    int
	Records int
	// Bytes is the keys' and values' size, before the store's own overhead.
	Bytes   int64
	Commits int
	Elapsed time.Duration
	// Samples are the identities of some clones, for checks.
	Samples []Identity
}

// Fill writes opts.Runs clones of t into st. It writes one group of
// records at a time (every clone's wf: records, then every clone's task:
// records, …), each in key order, opts.BatchRuns clones per Commit, rendered
// by opts.Renderers goroutines: commits then land in narrow, ascending key
// ranges, which an LSM store files without rewriting. A clone's identity is
// drawn from a generator seeded per clone, so that every group renders the
// same clone. st must not be in use by a weftd: clones are written without
// conditions. A fill that fails leaves the clones written so far, some of
// them partly.
func Fill(ctx context.Context, st store.Store, t *Template, opts Options) (*Result, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	f := &filler{t: t, opts: opts, st: st}
	if _, err := crand.Read(f.seed[:]); err != nil {
		return nil, err
	}
	start := time.Now()
	res := &Result{Runs: opts.Runs}
	if err := f.writeShared(ctx); err != nil {
		return nil, err
	}
	for g, items := range t.groups {
		last := g == len(t.groups)-1
		descending, err := f.descending(items)
		if err != nil {
			return nil, err
		}
		if err := f.group(ctx, items, descending, res, last); err != nil {
			return nil, err
		}
	}
	res.Elapsed = time.Since(start)
	samples := min(opts.Samples, opts.Runs)
	for s := range samples {
		id, err := f.identity(s * opts.Runs / samples)
		if err != nil {
			return nil, err
		}
		res.Samples = append(res.Samples, id)
	}
	return res, nil
}

// filler is one Fill.
type filler struct {
	t    *Template
	opts Options
	st   store.Store
	seed [32]byte
}

// writeShared writes the records every clone refers to (the plan record),
// once, as the template holds them.
func (f *filler) writeShared(ctx context.Context) error {
	if len(f.t.shared) == 0 {
		return nil
	}
	b := &store.Batch{}
	for _, it := range f.t.shared {
		b.Ops = append(b.Ops, store.Put(it.Key, it.Value))
	}
	_, err := f.st.Commit(ctx, b)
	return err
}

// identity answers clone i's identity, the same every time.
func (f *filler) identity(i int) (Identity, error) {
	seed := f.seed
	binary.LittleEndian.PutUint64(seed[:8], binary.LittleEndian.Uint64(seed[:8])^uint64(i))
	rng := rand.New(rand.NewChaCha8(seed))
	return f.t.NewIdentity(f.opts.CreatedFrom.Add(time.Duration(i)*f.opts.Spacing),
		fmt.Sprintf("%s-%09d", f.opts.RequestPrefix, i), rng)
}

// descending reports whether a group's keys fall as the clone number grows
// (the run index sorts newest first), so that it is written from the last
// clone down.
func (f *filler) descending(items []item) (bool, error) {
	if f.opts.Runs < 2 {
		return false, nil
	}
	first, err := f.firstKey(items, 0)
	if err != nil {
		return false, err
	}
	second, err := f.firstKey(items, 1)
	return bytes.Compare(second, first) < 0, err
}

func (f *filler) firstKey(items []item, i int) ([]byte, error) {
	id, err := f.identity(i)
	if err != nil {
		return nil, err
	}
	ops, _, err := f.t.render(id, items[:1], nil, nil)
	if err != nil {
		return nil, err
	}
	return ops[0].Key, nil
}

// job is one commit's worth of one group, rendered by any renderer and
// committed in order.
type job struct {
	first, last int // clone numbers [first, last)
	descending  bool
	ops         []store.Op
	bytes       int64
	err         error
	done        chan struct{}
}

// group writes one group of records for every clone.
func (f *filler) group(ctx context.Context, items []item, descending bool, res *Result, last bool) error {
	ctx, cancel := context.WithCancel(ctx)
	var wg sync.WaitGroup
	defer func() { cancel(); wg.Wait() }()
	ordered := make(chan *job, 2*f.opts.Renderers)
	work := make(chan *job)
	go func() {
		defer close(ordered)
		defer close(work)
		for b := 0; b*f.opts.BatchRuns < f.opts.Runs; b++ {
			j := &job{first: b * f.opts.BatchRuns, last: min((b+1)*f.opts.BatchRuns, f.opts.Runs), done: make(chan struct{})}
			if descending {
				j.first, j.last, j.descending = f.opts.Runs-j.last, f.opts.Runs-j.first, true
			}
			select {
			case ordered <- j:
			case <-ctx.Done():
				return
			}
			select {
			case work <- j:
			case <-ctx.Done():
				return
			}
		}
	}()
	for range f.opts.Renderers {
		wg.Go(func() {
			for j := range work {
				j.err = f.render(j, items)
				close(j.done)
			}
		})
	}
	written := 0
	for j := range ordered {
		select {
		case <-j.done:
		case <-ctx.Done():
			return ctx.Err()
		}
		if j.err != nil {
			return j.err
		}
		if _, err := f.st.Commit(ctx, &store.Batch{Ops: j.ops}); err != nil {
			return fmt.Errorf("commit %d clones' records: %w", j.last-j.first, err)
		}
		res.Records += len(j.ops)
		res.Bytes += j.bytes
		res.Commits++
		written += j.last - j.first
		if last && f.opts.Progress != nil {
			f.opts.Progress(written)
		}
	}
	return ctx.Err()
}

// render renders a job's clones, in key order.
func (f *filler) render(j *job, items []item) error {
	j.ops = make([]store.Op, 0, (j.last-j.first)*len(items))
	size := 0
	for _, it := range items {
		size += it.size
	}
	// A clone's records are the template's size give or take a few bytes
	// (a timestamp's trailing zeros are trimmed): one allocation, mostly.
	arena := make([]byte, 0, (j.last-j.first)*(size+size/16+64))
	for n := range j.last - j.first {
		i := j.first + n
		if j.descending {
			i = j.last - 1 - n
		}
		id, err := f.identity(i)
		if err != nil {
			return err
		}
		if j.ops, arena, err = f.t.render(id, items, j.ops, arena); err != nil {
			return err
		}
	}
	j.bytes = int64(len(arena))
	return nil
}
