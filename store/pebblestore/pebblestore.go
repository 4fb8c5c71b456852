package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/vfs"

	"github.com/weft-dev/weft/store"
)

// Config configures a Store. The zero value is usable.
type Config struct {
	// MaxValueBytes is the largest value accepted; 0 means
	// store.DefaultMaxValueBytes.
	MaxValueBytes int
	// Logger receives Pebble's own log lines; nil discards them.
	Logger *slog.Logger
	// MaxGroupBatches is the most batches one group commit folds into one
	// synced Pebble batch; 0 means DefaultMaxGroupBatches, 1 commits every
	// batch on its own.
	MaxGroupBatches int
	// MaxGroupBytes bounds the bytes of keys and values one group commit
	// takes; 0 means DefaultMaxGroupBytes. A batch larger than this still
	// commits, in a group of its own.
	MaxGroupBytes int
	// CacheBytes is the size of Pebble's block cache, which holds the
	// tables' data, index and filter blocks that reads need; 0 means
	// DefaultCacheBytes. It is allocated as reads fill it and counts in the
	// process's RSS once the store is larger than it. (Pebble counts its
	// memtables against its cache; the store gives Pebble a cache that
	// much larger, so that CacheBytes is left for blocks.)
	CacheBytes int64
}

// Defaults of Config.
const (
	DefaultMaxGroupBatches = 128
	DefaultMaxGroupBytes   = 8 << 20
	// DefaultCacheBytes is Pebble's own default block cache size.
	DefaultCacheBytes = 8 << 20
)

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.MaxValueBytes == 0 {
		c.MaxValueBytes = store.DefaultMaxValueBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	if c.MaxGroupBatches == 0 {
		c.MaxGroupBatches = DefaultMaxGroupBatches
	}
	if c.MaxGroupBytes == 0 {
		c.MaxGroupBytes = DefaultMaxGroupBytes
	}
	if c.CacheBytes == 0 {
		c.CacheBytes = DefaultCacheBytes
	}
	return c
}

func (c Config) validate() error {
	if c.MaxValueBytes < 0 {
		return fmt.Errorf("pebblestore: max value bytes must be positive, got %d", c.MaxValueBytes)
	}
	if c.MaxGroupBatches < 1 {
		return fmt.Errorf("pebblestore: max group batches must be at least 1, got %d", c.MaxGroupBatches)
	}
	if c.MaxGroupBytes < 1 {
		return fmt.Errorf("pebblestore: max group bytes must be at least 1, got %d", c.MaxGroupBytes)
	}
	if c.CacheBytes < 1 {
		return fmt.Errorf("pebblestore: cache bytes must be at least 1, got %d", c.CacheBytes)
	}
	return nil
}

// Store is the Pebble backend. Create it with Open.
type Store struct {
	caps store.Capabilities
	db   *pebble.DB

	// life guards db against Close: operations enter it.
	life store.CloseGuard

	// queue groups concurrent commits; its leader alone touches seq, the
	// last version handed out, and recent.
	queue  queue
	seq    uint64
	recent *recentVersions
	stats  groupStats

	// watchers hear of the puts under their prefixes (WatchPuts).
	watchers watchers

	// beforeApply, when set (by tests), runs before each group's synced
	// apply with the number of batches in the group; an error fails the
	// apply.
	beforeApply func(batches int) error
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the store in dir.
func Open(dir string, cfg Config) (*Store, error) { return open(dir, cfg, nil) }

// Pebble's memtables: each holds memTableBytes, and at most
// memTablesStopWrites of them are full before writes wait for a flush.
// Pebble's default is 4 MiB; 16 MiB means a quarter of the flushes, and so
// of the compactions of the tables they make into the last level, each of
// which rewrites that level's overlapping tables (a step's keys — checkpoints,
// tasks, events, indexes — spread over the whole keyspace). The cost is
// memory: up to memTableReservation, allocated outside Go's heap.
const (
	memTableBytes       = 16 << 20
	memTablesStopWrites = 2
)

// l0CompactionFiles is how many tables L0 holds before Pebble compacts it
// even though they do not overlap (Pebble's default is 500). Tables that do
// not overlap — a bulk load's, written in key order — stay in L0 until
// then; at 500 (726 MB after bench/fill's million runs) every flush of a
// later workload tips L0 over and the workload pays that debt. At 64 they
// move down (mostly without a rewrite: they overlap nothing) as they come.
const l0CompactionFiles = 64

// memTableReservation is what Pebble takes out of the block cache for its
// memtables: it reserves each memtable's size in the cache while the
// memtable lives, i.e. the one being written, those full and waiting for
// their flush, and the one it keeps for reuse.
const memTableReservation = (memTablesStopWrites + 1) * memTableBytes

// pebbleOptions are the store's Pebble options. Bloom filters (10 bits per
// key, every level) let a read of an absent key — every event's idempotency
// check is one — skip the tables that cannot hold it. The cache is
// Config.CacheBytes of blocks on top of the memtables' reservation, which
// would otherwise take all of it.
func pebbleOptions(cfg Config, fs vfs.FS) *pebble.Options {
	opts := &pebble.Options{Logger: pebbleLogger{cfg.Logger}, FS: fs,
		CacheSize:    cfg.CacheBytes + memTableReservation,
		MemTableSize: memTableBytes, MemTableStopWritesThreshold: memTablesStopWrites}
	opts.Levels[0].FilterPolicy = bloom.FilterPolicy(10)
	opts.L0CompactionFileThreshold = l0CompactionFiles
	return opts
}

// open opens the store in dir on fs (nil: the operating system's).
func open(dir string, cfg Config, fs vfs.FS) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	db, err := pebble.Open(dir, pebbleOptions(cfg, fs))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: open %s: %w", dir, err)
	}
	s := &Store{db: db, recent: newRecentVersions(recentCapacity), queue: queue{maxBatches: cfg.MaxGroupBatches, maxBytes: cfg.MaxGroupBytes}, caps: store.Capabilities{
		Backend:          "pebble",
		ConditionalBatch: true,
		AtomicBatch:      true,
		ReadAfterWrite:   true,
		ScanConsistency:  true,
		Durable:          true,
		MaxValueBytes:    cfg.MaxValueBytes,
	}}
	if err := s.loadMeta(); err != nil {
		_ = db.Close()
		return nil, err
	}
	return s, nil
}

// loadMeta checks the layout version (writing it into a new store) and loads
// the version counter.
func (s *Store) loadMeta() error {
	format, found, err := s.getRaw(metaFormat)
	if err != nil {
		return err
	}
	if !found {
		return translate(s.db.Set(metaFormat, []byte{layoutVersion}, pebble.Sync))
	}
	if !bytes.Equal(format, []byte{layoutVersion}) {
		return fmt.Errorf("pebblestore: on-disk layout %x is not supported (want %x)", format, layoutVersion)
	}
	seq, found, err := s.getRaw(metaSeq)
	if err != nil || !found {
		return err
	}
	if len(seq) != 8 {
		return fmt.Errorf("pebblestore: corrupt version counter (%d bytes)", len(seq))
	}
	s.seq = binary.BigEndian.Uint64(seq)
	return nil
}

// getRaw reads one raw Pebble key, copying the value.
func (s *Store) getRaw(k []byte) ([]byte, bool, error) {
	v, closer, err := s.db.Get(k)
	if errors.Is(err, pebble.ErrNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, translate(err)
	}
	defer closer.Close()
	return bytes.Clone(v), true, nil
}

// Capabilities implements store.Store.
func (s *Store) Capabilities() store.Capabilities { return s.caps }

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, key []byte) (store.Item, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Item{}, err
	}
	if err := s.life.Enter(ctx); err != nil {
		return store.Item{}, err
	}
	defer s.life.Leave()
	raw, found, err := s.getRaw(recordKey(key))
	if err != nil {
		return store.Item{}, err
	}
	if !found {
		return store.Item{}, store.NotFound(key)
	}
	return decodeItem(key, raw)
}

// Scan implements store.Store. One call reads one Pebble iterator, which is
// a consistent snapshot.
func (s *Store) Scan(ctx context.Context, p *store.ScanParams) (*store.ScanResult, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	if err := s.life.Enter(ctx); err != nil {
		return nil, err
	}
	defer s.life.Leave()
	lower, upper, empty := p.Bounds()
	res := &store.ScanResult{}
	if empty {
		return res, nil
	}
	it, err := s.db.NewIterWithContext(ctx, &pebble.IterOptions{LowerBound: recordKey(lower), UpperBound: recordUpper(upper)})
	if err != nil {
		return nil, translate(err)
	}
	defer it.Close()
	limit := p.EffectiveLimit()
	for ok := it.First(); ok; ok = it.Next() {
		if len(res.Items) == limit {
			res.Next = bytes.Clone(res.Items[limit-1].Key)
			break
		}
		item, err := decodeItem(bytes.Clone(it.Key()[1:]), it.Value())
		if err != nil {
			return nil, err
		}
		res.Items = append(res.Items, item)
	}
	if err := it.Error(); err != nil {
		return nil, translate(err)
	}
	return res, nil
}

// Commit implements store.Store. Concurrent commits share one synced apply
// (group commit, see the package documentation); each keeps its own outcome.
func (s *Store) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	if err := store.ValidateBatch(b, s.caps); err != nil {
		return nil, err
	}
	if err := s.life.Enter(ctx); err != nil {
		return nil, err
	}
	defer s.life.Leave()
	r := newRequest(b)
	leads := s.queue.join(r)
	if !leads {
		var err error
		if leads, err = s.queue.wait(ctx, r); err != nil {
			return nil, err
		}
	}
	if leads {
		s.lead()
	}
	return r.res, r.err
}

// Close implements store.Store. It waits for operations in flight and is
// idempotent.
func (s *Store) Close() error {
	return s.life.Close(func() error { return translate(s.db.Close()) })
}

// translate maps a Pebble error to the store's vocabulary at this edge.
func translate(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, pebble.ErrClosed):
		return fmt.Errorf("pebblestore: %w", store.ErrClosed)
	default:
		return fmt.Errorf("pebblestore: %w", err)
	}
}
