package pebblestore

import (
	"context"

	"github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/vfs"
)

// OpenFS opens the store in dir on fs, such as a crashable in-memory one.
func OpenFS(dir string, cfg Config, fs vfs.FS) (*Store, error) { return open(dir, cfg, fs) }

// GroupStats reports how many groups s committed, how many batches they
// held, and the most batches one group held.
func GroupStats(s *Store) (groups, batches, largest uint64) {
	return s.stats.groups.Load(), s.stats.batches.Load(), s.stats.largest.Load()
}

// QueueLen is the number of commits waiting to be taken into a group.
func QueueLen(s *Store) int { return s.queue.queueLen() }

// SetBeforeApply installs f to run before each group's synced apply, with the
// number of batches in the group; an error from f fails the apply. Call it
// before the store is shared.
func SetBeforeApply(s *Store, f func(batches int) error) { s.beforeApply = f }

// FlushAndFilterHits flushes s's memtables to tables and answers how often
// a table's filter has ruled a Get out so far.
func FlushAndFilterHits(s *Store) (flush func() error, hits func() int64) {
	return s.db.Flush, func() int64 { return s.db.Metrics().Filter.Hits }
}

// Flush flushes s's memtables to tables.
func Flush(s *Store) error { return s.db.Flush() }

// BlockCache answers the bytes in s's block cache and its hits and misses so
// far.
func BlockCache(s *Store) (size, hits, misses int64) {
	m := s.db.Metrics().BlockCache
	return m.Size, m.Hits, m.Misses
}

// StoredReads is how many condition keys s has read from Pebble, rather
// than from a group's own writes or the recent versions.
func StoredReads(s *Store) uint64 { return s.stats.storedReads.Load() }

// RecentCapacity is how many keys the recent versions hold.
const RecentCapacity = recentCapacity

// CompactAll flushes s and compacts every table into the last level, and
// answers how many tables that level holds.
func CompactAll(s *Store) (int64, error) {
	if err := s.db.Compact(context.Background(), []byte{0}, []byte{0xff}, false); err != nil {
		return 0, err
	}
	return s.db.Metrics().Levels[len(s.db.Metrics().Levels)-1].TablesCount, nil
}

// FilterHits answers how often a table's filter has ruled a read out so far.
func FilterHits(s *Store) int64 { return s.db.Metrics().Filter.Hits }

// LevelEntries answers, after flushing s, how many point tombstones and
// how many entries the tables hold in all.
func LevelEntries(s *Store) (tombstones, entries uint64, err error) {
	if err := s.db.Flush(); err != nil {
		return 0, 0, err
	}
	levels, err := s.db.SSTables(pebble.WithProperties())
	if err != nil {
		return 0, 0, err
	}
	for _, tables := range levels {
		for _, t := range tables {
			tombstones += t.Properties.NumDeletions
			entries += t.Properties.NumEntries
		}
	}
	return tombstones, entries, nil
}

// PebbleOptions answers the options a store of cfg opens Pebble with.
func PebbleOptions(cfg Config) *pebble.Options { return pebbleOptions(cfg.WithDefaults(), nil) }

// L0CompactionFiles is the number of L0 tables that makes Pebble compact L0.
const L0CompactionFiles = l0CompactionFiles
