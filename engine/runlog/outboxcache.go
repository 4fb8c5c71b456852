package runlog

import (
	"sync"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/store"
)

// Default bounds of an OutboxCache: about a second of outbox entries at
// weftd's highest rates, each a few hundred bytes per event.
const (
	DefaultOutboxCacheEntries = 4096
	DefaultOutboxCacheBytes   = 8 << 20
)

// OutboxCache holds the events of the outbox entries this process
// committed, as stored, so that an export worker in the same process
// resolves those entries without reading their events back
// (ResolveOutbox's store.GetMany). It is never a source of truth: it is
// filled only by a commit that succeeded (Committed), and an entry it does
// not hold — written by another process, by a commit whose outcome was
// unknown, evicted, or before a restart — is resolved from the store.
//
// What it serves is what the store holds: an entry is held under its key
// and the version its commit gave it, which no other write of that key
// ever has (docs/storage.md#versions), and the events it names were put in
// that same batch and are never written again (a run's events are only
// ever appended, and retention removes none while the run has an outbox
// entry: docs/export.md#the-outbox-cache). ResolveOutbox
// serves an entry from it only at the version it scanned, and takes it out:
// an entry is resolved from memory at most once.
//
// Its memory is bounded: two generations, each of at most half the
// entries and half the bytes; when the current one fills, the older is
// dropped whole. Safe for concurrent use.
type OutboxCache struct {
	mu sync.Mutex
	// maxEntries and maxBytes bound one generation.
	maxEntries, maxBytes int
	cur, old             cacheGeneration
}

// cacheGeneration is one generation of an OutboxCache.
type cacheGeneration struct {
	entries map[outboxID]cachedEntry
	bytes   int
}

// outboxID names an outbox entry: ob:{runID}:{first}.
type outboxID struct {
	runID string
	first uint64
}

// cachedEntry is a committed outbox entry: the version the commit gave it,
// its tenant, and the events it names as stored, in run_seq order.
type cachedEntry struct {
	version  uint64
	tenantID string
	values   [][]byte
	size     int
}

// cachedEntryOverhead is what an entry costs besides its events' bytes
// (its map slot, its struct, its run's id): an estimate, for the bound.
const cachedEntryOverhead = 128

// NewOutboxCache answers a cache of at most maxEntries outbox entries and
// about maxBytes of their events; a bound of 0 or less is its default.
func NewOutboxCache(maxEntries, maxBytes int) *OutboxCache {
	if maxEntries <= 0 {
		maxEntries = DefaultOutboxCacheEntries
	}
	if maxBytes <= 0 {
		maxBytes = DefaultOutboxCacheBytes
	}
	c := &OutboxCache{maxEntries: max(maxEntries/2, 1), maxBytes: max(maxBytes/2, 1)}
	c.cur = c.newGeneration()
	return c
}

func (c *OutboxCache) newGeneration() cacheGeneration {
	return cacheGeneration{entries: make(map[outboxID]cachedEntry, min(c.maxEntries, 1024))}
}

// Committed notes the outbox entries a committed batch wrote, with the
// events they name: b is the batch, res what its Commit answered (nil
// error), and a what AppendEvents answered when it added the events to b.
// Call it only once the commit is known to have succeeded — never after an
// error, an outcome unknown among them. A nil cache notes nothing.
func (c *OutboxCache) Committed(b *store.Batch, res *store.CommitResult, a Appended) {
	if c == nil || !a.outbox || len(a.events) == 0 || res == nil {
		return
	}
	if a.outboxAt+a.records > len(b.Ops) || len(res.Versions) != len(b.Ops) {
		return // not the batch AppendEvents wrote to: note nothing
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	rec := 0
	for first := 0; first < len(a.events); rec++ {
		last := entryEnd(a.events, first)
		e := cachedEntry{version: res.Versions[a.outboxAt+rec], tenantID: a.tenantID, values: make([][]byte, 0, last-first+1)}
		e.size = cachedEntryOverhead + len(a.events[first].RunID) + len(a.tenantID)
		err := runcodec.EachStoredEvent(b.Ops[a.at+rec].Value, func(v []byte) error {
			e.values = append(e.values, v)
			e.size += len(v) + 24
			return nil
		})
		if err == nil && len(e.values) == last-first+1 {
			c.putLocked(outboxID{runID: a.events[first].RunID, first: a.events[first].Seq}, e)
		}
		first = last + 1
	}
}

// putLocked holds e, starting a new generation when the current one would
// go over a bound. An entry larger than a generation is not held.
func (c *OutboxCache) putLocked(id outboxID, e cachedEntry) {
	if e.size > c.maxBytes {
		return
	}
	c.dropLocked(id)
	if len(c.cur.entries)+1 > c.maxEntries || c.cur.bytes+e.size > c.maxBytes {
		c.old = c.cur
		c.cur = c.newGeneration()
	}
	c.cur.entries[id] = e
	c.cur.bytes += e.size
}

// dropLocked forgets the entry held for id, in either generation.
func (c *OutboxCache) dropLocked(id outboxID) (cachedEntry, bool) {
	if e, ok := c.cur.drop(id); ok {
		return e, true
	}
	return c.old.drop(id)
}

// drop forgets the entry the generation holds for id.
func (g *cacheGeneration) drop(id outboxID) (cachedEntry, bool) {
	e, ok := g.entries[id]
	if ok {
		delete(g.entries, id)
		g.bytes -= e.size
	}
	return e, ok
}

// take answers, and forgets, the events of the reference ref as committed
// at version: only when the cache holds that entry at that version, for
// ref's tenant, naming as many events as ref does. An entry held at another
// version is forgotten too (it is not the one in the store).
func (c *OutboxCache) take(ref outboxRef, version uint64) ([][]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	e, ok := c.dropLocked(outboxID{runID: ref.runID, first: ref.first})
	c.mu.Unlock()
	if !ok || e.version != version || e.tenantID != ref.tenantID || uint64(len(e.values)) != ref.last-ref.first+1 {
		return nil, false
	}
	return e.values, true
}

// Len answers how many entries the cache holds, and about how many bytes.
func (c *OutboxCache) Len() (entries, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.cur.entries) + len(c.old.entries), c.cur.bytes + c.old.bytes
}
