package pebblestore

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"

	"github.com/weft-dev/weft/store"
)

// Config configures a Store. The zero value is usable.
type Config struct {
	// MaxValueBytes is the largest value accepted; 0 means
	// store.DefaultMaxValueBytes.
	MaxValueBytes int
	// Logger receives Pebble's own log lines; nil discards them.
	Logger *slog.Logger
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.MaxValueBytes == 0 {
		c.MaxValueBytes = store.DefaultMaxValueBytes
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	return c
}

func (c Config) validate() error {
	if c.MaxValueBytes < 0 {
		return fmt.Errorf("pebblestore: max value bytes must be positive, got %d", c.MaxValueBytes)
	}
	return nil
}

// Store is the Pebble backend. Create it with Open.
type Store struct {
	caps store.Capabilities
	db   *pebble.DB

	// life guards db against Close: operations hold it for reading.
	life   sync.RWMutex
	closed bool

	// write serialises commits; seq is the last version handed out.
	write sync.Mutex
	seq   uint64
}

var _ store.Store = (*Store)(nil)

// Open opens (creating if needed) the store in dir.
func Open(dir string, cfg Config) (*Store, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	db, err := pebble.Open(dir, &pebble.Options{Logger: pebbleLogger{cfg.Logger}})
	if err != nil {
		return nil, fmt.Errorf("pebblestore: open %s: %w", dir, err)
	}
	s := &Store{db: db, caps: store.Capabilities{
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

// enter guards an operation against Close; call the returned func when done.
func (s *Store) enter(ctx context.Context) (func(), error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.life.RLock()
	if s.closed {
		s.life.RUnlock()
		return nil, store.ErrClosed
	}
	return s.life.RUnlock, nil
}

// Get implements store.Store.
func (s *Store) Get(ctx context.Context, key []byte) (store.Item, error) {
	if err := store.ValidateKey(key); err != nil {
		return store.Item{}, err
	}
	leave, err := s.enter(ctx)
	if err != nil {
		return store.Item{}, err
	}
	defer leave()
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
	leave, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
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

// Commit implements store.Store.
func (s *Store) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	if err := store.ValidateBatch(b, s.caps); err != nil {
		return nil, err
	}
	leave, err := s.enter(ctx)
	if err != nil {
		return nil, err
	}
	defer leave()
	s.write.Lock()
	defer s.write.Unlock()
	if err := store.CheckConditions(b.Conditions, s.lookup); err != nil {
		return nil, err
	}
	return s.apply(b.Ops)
}

// lookup reports a key's presence and version; s.write must be held.
func (s *Store) lookup(key []byte) (bool, uint64, error) {
	raw, found, err := s.getRaw(recordKey(key))
	if err != nil || !found {
		return false, 0, err
	}
	item, err := decodeItem(key, raw)
	return true, item.Version, err
}

// apply writes ops and the advanced counter in one synced Pebble batch;
// s.write must be held.
func (s *Store) apply(ops []store.Op) (*store.CommitResult, error) {
	res := &store.CommitResult{Versions: make([]uint64, len(ops))}
	if len(ops) == 0 {
		return res, nil
	}
	// The counter advances even if the apply fails, so that a write whose
	// outcome is unknown can never share its version with a later one.
	s.seq++
	version := s.seq
	batch := s.db.NewBatch()
	defer batch.Close()
	for i, op := range ops {
		var err error
		if op.Kind == store.OpDelete {
			err = batch.Delete(recordKey(op.Key), nil)
		} else {
			err = batch.Set(recordKey(op.Key), encodeValue(version, op.Value), nil)
			res.Versions[i] = version
		}
		if err != nil {
			return nil, translate(err)
		}
	}
	if err := batch.Set(metaSeq, binary.BigEndian.AppendUint64(nil, version), nil); err != nil {
		return nil, translate(err)
	}
	if err := batch.Commit(pebble.Sync); err != nil {
		return nil, &store.OutcomeUnknownError{Cause: translate(err)}
	}
	return res, nil
}

// Close implements store.Store. It waits for operations in flight and is
// idempotent.
func (s *Store) Close() error {
	s.life.Lock()
	defer s.life.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	return translate(s.db.Close())
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
