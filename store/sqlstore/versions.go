package sqlstore

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"
)

// Versions come from a hybrid logical clock kept by each store, not from the
// database: a global sequence drawn once per put is one row every write of a
// cluster increments, which CockroachDB serialises on one range (a "hot
// sequence"). A version is
//
//	tick << nodeBits | node
//
// where tick counts microseconds since versionEpoch, advanced past the last
// tick handed out and past every version a batch is conditioned on
// (observe), and node is the store's own number, drawn from the sequence
// weft_store_node once when the store opens (drawNodeSQL), modulo
// 1 << nodeBits. So:
//   - one store never hands out a version twice (its ticks only grow), so a
//     key's version changes on every write;
//   - two stores never hand out the same version while their nodes differ:
//     the low bits tell them apart. Nodes repeat only after 4,096 stores
//     opened on the database, so two stores open at once share one only when
//     4,096 others opened during the life of one of them (docs/storage.md,
//     "Versions");
//   - a key written under a compare-and-set gets a version above the one the
//     batch was conditioned on (observe), whichever store wrote that one: so
//     a key's versions grow along every chain of compare-and-sets (the
//     engine's checkpoints), which the engine's caches rely on to tell the
//     newer of two checkpoints. Blind writes of one key by two stores are
//     ordered by their clocks;
//   - versions drawn from weft_kv_version before migration 0003 are below
//     2^40 and every tick-made one is above 2^59, so none repeats across the
//     upgrade, and a key's versions keep growing across it.
const (
	nodeBits = 12
	nodeMask = 1<<nodeBits - 1
)

// versionEpoch is where ticks start: 2020-01-01 UTC. A tick fits 51 bits
// until 2091, so that a version stays a positive INT8.
var versionEpoch = time.Date(2020, 1, 1, 0, 0, 0, 0, time.UTC)

// drawNodeSQL draws the store's node number when it opens.
const drawNodeSQL = "SELECT nextval('weft_store_node')"

// versionClock hands out a store's versions.
type versionClock struct {
	node uint64
	last atomic.Uint64 // the last tick handed out, or observed
	now  func() time.Time
}

// newVersionClock answers the clock of the store numbered node (from the
// sequence: only its low nodeBits are used).
func newVersionClock(node int64, now func() time.Time) *versionClock {
	return &versionClock{node: uint64(node) & nodeMask, now: now}
}

// drawNode reads the store's number from the database.
func (s *Store) drawNode(ctx context.Context) (int64, error) {
	var n int64
	if err := s.pool.QueryRow(ctx, drawNodeSQL).Scan(&n); err != nil {
		return 0, fmt.Errorf("sqlstore: draw the store's node number: %w", err)
	}
	return n, nil
}

// tick answers the current physical tick.
func (c *versionClock) tick() uint64 {
	return uint64(c.now().Sub(versionEpoch) / time.Microsecond)
}

// next answers n consecutive new versions' first tick: the versions are
// version(first), …, version(first+n-1).
func (c *versionClock) next(n int) uint64 {
	if n <= 0 {
		return 0
	}
	for {
		last := c.last.Load()
		first := max(last+1, c.tick())
		if c.last.CompareAndSwap(last, first+uint64(n)-1) {
			return first
		}
	}
}

// version answers the version of tick.
func (c *versionClock) version(tick uint64) uint64 { return tick<<nodeBits | c.node }

// observe advances the clock past version v, a version a batch is
// conditioned on: every version handed out afterwards is greater than v.
func (c *versionClock) observe(v uint64) {
	t := v >> nodeBits
	for {
		last := c.last.Load()
		if last >= t || c.last.CompareAndSwap(last, t) {
			return
		}
	}
}
