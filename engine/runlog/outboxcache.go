package runlog

import (
	"sync"

	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/store"
)

// Default bounds of an OutboxCache: the runs of about a second at weftd's
// highest rates, each a few hundred bytes per event.
const (
	DefaultOutboxCacheEntries = 4096
	DefaultOutboxCacheBytes   = 8 << 20
)

// OutboxCache is what this process knows of its runs' outbox entries, so
// that neither side of the outbox reads the store for what the other side
// in the same process just did: the engine notes each decision that
// appended events once it committed (Committed), and the export worker
// notes each entry it deleted (Exported). It is never a source of truth.
//
// The engine asks it whether a run has its entry (Live), to write the
// entry or assert it without reading it first; the batch's condition on
// the entry is what proves the answer (runlog.AppendEvents), and a wrong
// one loses the decision's race, which is made again on the store's.
//
// The export worker takes from it the events a run's entry names
// (ResolveRuns) instead of reading them back: the events this process
// committed, as stored, with the version its last commit gave the run's
// checkpoint. They are served only when the checkpoint the worker read is
// at that version, which no other write of that key ever has
// (docs/storage.md#versions): then no decision appended events since, and
// the held events are the run's last. A run's events are only ever
// appended, and retention removes none while the run has an outbox entry
// (docs/export.md#the-outbox-cache).
//
// Its memory is bounded: two generations, each of at most half the runs
// and half the bytes; when the current one fills, the older is dropped
// whole. Safe for concurrent use.
type OutboxCache struct {
	mu sync.Mutex
	// maxEntries and maxBytes bound one generation.
	maxEntries, maxBytes int
	cur, old             cacheGeneration
}

// cacheGeneration is one generation of an OutboxCache.
type cacheGeneration struct {
	runs  map[string]*cachedRun
	bytes int
}

// cachedRun is what the cache knows of one run's outbox entry.
type cachedRun struct {
	runID string
	// live says the run's entry is there, as this process last knew.
	live bool
	// values are the run's events from run_seq from on, as stored, that
	// this process committed (none: it holds none); checkpoint is the
	// version its last commit gave the run's checkpoint.
	from       uint64
	values     [][]byte
	checkpoint uint64
	size       int
}

// cachedRunOverhead is what a run costs besides its events' bytes (its map
// slot, its struct, its id): an estimate, for the bound.
const cachedRunOverhead = 128

// NewOutboxCache answers a cache of at most maxEntries runs and about
// maxBytes of their events; a bound of 0 or less is its default.
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
	return cacheGeneration{runs: make(map[string]*cachedRun, min(c.maxEntries, 1024))}
}

// Committed notes a committed batch that appended events with the run's
// outbox entry: b is the batch, res what its Commit answered (nil error),
// and a what AppendEvents answered when it added the events to b. Call it
// only once the commit is known to have succeeded — never after an error,
// an outcome unknown among them. A nil cache notes nothing.
func (c *OutboxCache) Committed(b *store.Batch, res *store.CommitResult, a Appended) {
	if c == nil || a.outbox == NoOutbox || len(a.events) == 0 || res == nil {
		return
	}
	if a.at+a.records > len(b.Ops) || len(res.Versions) != len(b.Ops) {
		return // not the batch AppendEvents wrote to: note nothing
	}
	runID := a.events[0].RunID
	values, size := storedForms(b, a)
	consecutive := len(values) == len(a.events) && a.events[len(a.events)-1].Seq-a.events[0].Seq == uint64(len(a.events)-1)
	checkpoint, ok := uint64(0), len(b.Ops) > 0 && string(b.Ops[0].Key) == string(CheckpointKey(runID))
	if ok {
		checkpoint = res.Versions[0]
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.runLocked(runID)
	r.live = true
	if !ok || !consecutive {
		c.resizeLocked(r, nil, 0, 0) // the run's events are read from the store
		return
	}
	first := a.events[0].Seq
	if len(r.values) > 0 && r.from+uint64(len(r.values)) == first {
		c.resizeLocked(r, append(r.values, values...), r.from, r.size+size)
	} else {
		c.resizeLocked(r, values, first, size)
	}
	r.checkpoint = checkpoint
}

// storedForms answers the stored form (FormatEvent) of each event a
// committed batch appended, and how much memory they take in the cache:
// those its encoding kept (Appended.forms), else read from its records —
// a group of deltas rebuilt; nil when a record cannot be read.
func storedForms(b *store.Batch, a Appended) ([][]byte, int) {
	values := make([][]byte, 0, len(a.events))
	size := 0
	keep := func(v []byte) {
		values = append(values, v)
		size += len(v) + 24
	}
	if a.forms != nil {
		a.forms.Each(keep)
		return values, size
	}
	for _, op := range b.Ops[a.at : a.at+a.records] {
		if runcodec.EachStoredEvent(op.Value, EventKeyRun(op.Key), func(v []byte) error { keep(v); return nil }) != nil {
			return nil, 0
		}
	}
	return values, size
}

// runLocked answers the run's record, in the current generation, made when
// the cache holds none.
func (c *OutboxCache) runLocked(runID string) *cachedRun {
	if r, ok := c.cur.runs[runID]; ok {
		return r
	}
	r, ok := c.old.runs[runID]
	if ok {
		delete(c.old.runs, runID)
		c.old.bytes -= r.size
	} else {
		r = &cachedRun{runID: runID}
	}
	if len(c.cur.runs)+1 > c.maxEntries || c.cur.bytes+r.size > c.maxBytes {
		c.old = c.cur
		c.cur = c.newGeneration()
	}
	if r.size > c.maxBytes {
		r.values, r.size = nil, 0
	}
	c.cur.runs[runID] = r
	c.cur.bytes += r.size
	return r
}

// resizeLocked sets the events r holds, of the given size, r being in the
// current generation, which starts again without the others when r would
// take it over its bound; a run larger than a generation holds none.
func (c *OutboxCache) resizeLocked(r *cachedRun, values [][]byte, from uint64, size int) {
	if len(values) == 0 || size > c.maxBytes {
		values, from, size = nil, 0, 0
	}
	c.cur.bytes -= r.size
	if c.cur.bytes+size > c.maxBytes {
		delete(c.cur.runs, r.runID)
		c.old = c.cur
		c.cur = c.newGeneration()
		c.cur.runs[r.runID] = r
	}
	c.cur.bytes += size
	r.values, r.from, r.size = values, from, size
}

// Live answers whether the run has its outbox entry, as this process last
// knew (known false: it knows nothing of the run). A nil cache knows
// nothing.
func (c *OutboxCache) Live(runID string) (live, known bool) {
	if c == nil {
		return false, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.cur.runs[runID]
	if !ok {
		r, ok = c.old.runs[runID]
	}
	if !ok {
		return false, false
	}
	return r.live, true
}

// Saw notes whether the run's outbox entry was there when read from the
// store; a run seen without one holds no events.
func (c *OutboxCache) Saw(runID string, live bool) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r := c.runLocked(runID)
	r.live = live
	if !live {
		c.resizeLocked(r, nil, 0, 0)
	}
}

// Exported notes that the export worker deleted the run's outbox entry:
// the run has none, and its events are no longer needed.
func (c *OutboxCache) Exported(runID string) { c.Saw(runID, false) }

// Published notes that the run's events through run_seq through were
// published: they are no longer held.
func (c *OutboxCache) Published(runID string, through uint64) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.cur.runs[runID]
	if !ok || len(r.values) == 0 || through < r.from {
		return
	}
	n := min(through-r.from+1, uint64(len(r.values)))
	size := r.size
	for _, v := range r.values[:n] {
		size -= len(v) + 24
	}
	c.resizeLocked(r, r.values[n:], r.from+n, size)
}

// held answers the run's events from run_seq from on when the cache holds
// them and its checkpoint is at version checkpoint (so they are the run's
// last): possibly none, when from is past the last.
func (c *OutboxCache) held(runID string, from, checkpoint uint64) ([][]byte, bool) {
	if c == nil {
		return nil, false
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	r, ok := c.cur.runs[runID]
	if !ok {
		r, ok = c.old.runs[runID]
	}
	if !ok || len(r.values) == 0 || r.checkpoint != checkpoint || from < r.from {
		return nil, false
	}
	if skip := from - r.from; skip < uint64(len(r.values)) {
		return r.values[skip:], true
	}
	return nil, true
}

// Len answers how many runs the cache holds events of, and about how many
// bytes.
func (c *OutboxCache) Len() (runs, bytes int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, g := range []cacheGeneration{c.cur, c.old} {
		for _, r := range g.runs {
			if len(r.values) > 0 {
				n++
			}
		}
	}
	return n, c.cur.bytes + c.old.bytes
}

// Forget forgets what the cache knows of the run's outbox entry: the
// store's is read next.
func (c *OutboxCache) Forget(runID string) {
	if c == nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.cur.runs[runID]; ok {
		delete(c.cur.runs, runID)
		c.cur.bytes -= r.size
	}
	if r, ok := c.old.runs[runID]; ok {
		delete(c.old.runs, runID)
		c.old.bytes -= r.size
	}
}
