package memstore

import (
	"bytes"
	"context"
	"slices"
	"sync"

	"github.com/weft-dev/weft/store"
)

// Config configures a Store. The zero value is usable.
type Config struct {
	// MaxValueBytes is the largest value accepted; 0 means
	// store.DefaultMaxValueBytes.
	MaxValueBytes int
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.MaxValueBytes == 0 {
		c.MaxValueBytes = store.DefaultMaxValueBytes
	}
	return c
}

type record struct {
	value   []byte
	version uint64
}

// Store is the in-memory backend. Create it with New.
type Store struct {
	caps store.Capabilities

	mu      sync.RWMutex
	closed  bool
	records map[string]record
	keys    []string // sorted
	seq     uint64   // last version handed out
}

var _ store.Store = (*Store)(nil)

// New returns an empty store.
func New(cfg Config) *Store {
	cfg = cfg.WithDefaults()
	return &Store{
		caps: store.Capabilities{
			Backend:          "memory",
			ConditionalBatch: true,
			AtomicBatch:      true,
			ReadAfterWrite:   true,
			ScanConsistency:  true,
			Durable:          false,
			MaxValueBytes:    cfg.MaxValueBytes,
		},
		records: map[string]record{},
	}
}

// Capabilities implements store.Store.
func (s *Store) Capabilities() store.Capabilities { return s.caps }

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, key []byte) (store.Item, error) {
	if err := ctx.Err(); err != nil {
		return store.Item{}, err
	}
	if err := store.ValidateKey(key); err != nil {
		return store.Item{}, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return store.Item{}, store.ErrClosed
	}
	r, ok := s.records[string(key)]
	if !ok {
		return store.Item{}, store.NotFound(key)
	}
	return store.Item{Key: bytes.Clone(key), Value: slices.Clone(r.value), Version: r.version}, nil
}

// Scan implements store.Store.
func (s *Store) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := p.Validate(); err != nil {
		return nil, err
	}
	lower, upper, empty := p.Bounds()
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, store.ErrClosed
	}
	res := &store.ScanResult{}
	if empty {
		return res, nil
	}
	limit := p.EffectiveLimit()
	i, _ := slices.BinarySearch(s.keys, string(lower))
	for ; i < len(s.keys) && store.InBounds([]byte(s.keys[i]), nil, upper); i++ {
		if len(res.Items) == limit {
			res.Next = bytes.Clone(res.Items[limit-1].Key)
			break
		}
		r := s.records[s.keys[i]]
		res.Items = append(res.Items, store.Item{Key: []byte(s.keys[i]), Value: slices.Clone(r.value), Version: r.version})
	}
	return res, nil
}

// Commit implements store.Store.
func (s *Store) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	if err := store.ValidateBatch(b, s.caps); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, store.ErrClosed
	}
	if err := store.CheckConditions(b.Conditions, s.lookup); err != nil {
		return nil, err
	}
	return s.apply(b.Ops), nil
}

// lookup reports a key's presence and version; s.mu must be held.
func (s *Store) lookup(key []byte) (bool, uint64, error) {
	r, ok := s.records[string(key)]
	return ok, r.version, nil
}

// apply writes ops under one new version; s.mu must be held for writing.
func (s *Store) apply(ops []store.Op) *store.CommitResult {
	res := &store.CommitResult{Versions: make([]uint64, len(ops))}
	if len(ops) == 0 {
		return res
	}
	s.seq++
	for i, op := range ops {
		k := string(op.Key)
		_, exists := s.records[k]
		if op.Kind == store.OpDelete {
			if exists {
				delete(s.records, k)
				s.removeKey(k)
			}
			continue
		}
		if !exists {
			s.insertKey(k)
		}
		s.records[k] = record{value: bytes.Clone(op.Value), version: s.seq}
		res.Versions[i] = s.seq
	}
	return res
}

func (s *Store) insertKey(k string) {
	i, _ := slices.BinarySearch(s.keys, k)
	s.keys = slices.Insert(s.keys, i, k)
}

func (s *Store) removeKey(k string) {
	if i, ok := slices.BinarySearch(s.keys, k); ok {
		s.keys = slices.Delete(s.keys, i, i+1)
	}
}

// Close implements store.Store. The records are dropped.
func (s *Store) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.closed = true
	s.records, s.keys = nil, nil
	return nil
}
