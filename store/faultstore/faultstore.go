package faultstore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/weft-dev/weft/internal/clock"
	"github.com/weft-dev/weft/store"
)

// ErrInjected is the cause of every injected failure.
var ErrInjected = errors.New("faultstore: injected fault")

// Fault is one kind of injected commit failure.
type Fault uint8

const (
	// None lets the commit through.
	None Fault = iota
	// BeforeCommit fails without calling the inner store: nothing is written.
	BeforeCommit
	// AfterCommit commits to the inner store, then reports
	// *store.OutcomeUnknownError as if the acknowledgement were lost.
	AfterCommit
	// Retryable fails without writing, with an error that is
	// store.ErrRetryable (a serialization conflict that outlived retries).
	Retryable
)

// String names the fault.
func (f Fault) String() string {
	names := [...]string{"none", "before-commit", "after-commit", "retryable"}
	if int(f) < len(names) {
		return names[f]
	}
	return "invalid"
}

// Config sets the rate of each fault, per Commit call, as a probability in
// [0, 1]. The rates are tried in the order BeforeCommit, AfterCommit,
// Retryable. Seed makes the sequence reproducible.
//
// CommitDelay makes every commit wait that long before it reaches the inner
// store; when the caller's context ends first, nothing is written and the
// context's error is answered. AckDelay makes every commit wait after the
// inner store wrote it; when the context ends first, the write stands and
// *store.OutcomeUnknownError is answered. Both wait on the real (or
// testing/synctest) clock; SetDelays changes them later.
type Config struct {
	BeforeCommitRate float64
	AfterCommitRate  float64
	RetryableRate    float64
	Seed             uint64
	CommitDelay      time.Duration
	AckDelay         time.Duration
}

func (c Config) validate() error {
	for _, r := range []float64{c.BeforeCommitRate, c.AfterCommitRate, c.RetryableRate} {
		if r < 0 || r > 1 {
			return fmt.Errorf("faultstore: fault rates must be within [0, 1], got %v", r)
		}
	}
	if c.BeforeCommitRate+c.AfterCommitRate+c.RetryableRate > 1 {
		return errors.New("faultstore: fault rates must add up to at most 1")
	}
	return nil
}

// Stats counts what the decorator did.
type Stats struct {
	Commits, BeforeCommit, AfterCommit, Retryable int
}

// Store is the decorator. Create it with New.
type Store struct {
	inner store.Store
	cfg   Config

	mu     sync.Mutex
	delays [2]time.Duration
	rng    *rand.Rand
	queue  []Fault
	stats  Stats
}

var _ store.Store = (*Store)(nil)

// New wraps inner, which it owns and closes.
func New(inner store.Store, cfg Config) (*Store, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	return &Store{inner: inner, cfg: cfg, delays: [2]time.Duration{cfg.CommitDelay, cfg.AckDelay}, rng: rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))}, nil
}

// InjectNext queues faults for the next commits, one each, ahead of the
// configured rates.
func (s *Store) InjectNext(faults ...Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.queue = append(s.queue, faults...)
}

// SetDelays replaces the commit and acknowledgement delays.
func (s *Store) SetDelays(commit, ack time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.delays = [2]time.Duration{commit, ack}
}

func (s *Store) currentDelays() (commit, ack time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.delays[0], s.delays[1]
}

// Stats returns the counts so far.
func (s *Store) Stats() Stats {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stats
}

// next picks the fault for one commit and counts it.
func (s *Store) next() Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.stats.Commits++
	f := None
	if len(s.queue) > 0 {
		f, s.queue = s.queue[0], s.queue[1:]
	} else {
		f = s.roll()
	}
	switch f {
	case BeforeCommit:
		s.stats.BeforeCommit++
	case AfterCommit:
		s.stats.AfterCommit++
	case Retryable:
		s.stats.Retryable++
	}
	return f
}

func (s *Store) roll() Fault {
	x := s.rng.Float64()
	switch {
	case x < s.cfg.BeforeCommitRate:
		return BeforeCommit
	case x < s.cfg.BeforeCommitRate+s.cfg.AfterCommitRate:
		return AfterCommit
	case x < s.cfg.BeforeCommitRate+s.cfg.AfterCommitRate+s.cfg.RetryableRate:
		return Retryable
	}
	return None
}

// Capabilities implements store.Store: the inner store's, renamed.
func (s *Store) Capabilities() store.Capabilities {
	caps := s.inner.Capabilities()
	caps.Backend = "faults(" + caps.Backend + ")"
	return caps
}

// Get implements store.Store; reads are never faulted.
func (s *Store) Get(ctx context.Context, key []byte) (store.Item, error) {
	return s.inner.Get(ctx, key)
}

// Scan implements store.Store; reads are never faulted.
func (s *Store) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	return s.inner.Scan(ctx, p)
}

// Commit implements store.Store, injecting at most one fault per call and
// the configured delays.
func (s *Store) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	commitDelay, ackDelay := s.currentDelays()
	if err := clock.Sleep(ctx, commitDelay); err != nil {
		return nil, fmt.Errorf("faultstore: commit delayed past the caller's deadline: %w", err)
	}
	if ackDelay > 0 {
		res, err := s.commit(ctx, b)
		if err != nil {
			return res, err
		}
		if werr := clock.Sleep(ctx, ackDelay); werr != nil {
			return nil, &store.OutcomeUnknownError{Cause: fmt.Errorf("faultstore: acknowledgement delayed past the caller's deadline: %w", werr)}
		}
		return res, nil
	}
	return s.commit(ctx, b)
}

func (s *Store) commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	switch s.next() {
	case BeforeCommit:
		return nil, fmt.Errorf("faultstore: failing before commit: %w", ErrInjected)
	case Retryable:
		return nil, fmt.Errorf("faultstore: serialization conflict: %w", errors.Join(store.ErrRetryable, ErrInjected))
	case AfterCommit:
		if _, err := s.inner.Commit(ctx, b); err != nil {
			return nil, err
		}
		return nil, &store.OutcomeUnknownError{Cause: fmt.Errorf("faultstore: acknowledgement lost after commit: %w", ErrInjected)}
	}
	return s.inner.Commit(ctx, b)
}

// Close implements store.Store.
func (s *Store) Close() error { return s.inner.Close() }
