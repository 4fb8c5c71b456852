package export

import (
	"bytes"
	"sync"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/store"
)

// putWatcher is a store that hears of every put under a prefix, its own
// process's and every other's: pebblestore.Store, whose directory lock keeps
// other processes out. fn gets the least key a commit put (or may have put),
// after the put is visible and before the commit returns.
type putWatcher interface {
	WatchPuts(prefix []byte, fn func(least []byte)) (cancel func())
}

// resume is where an outbox pass starts: a key below which no outbox entry
// is live. An LSM store (Pebble) keeps every deleted entry as a tombstone
// until compaction, and one that scanned the outbox from its beginning would
// step, on every pass, over every entry exported since; with a deep LSM
// that was most of the pass's cost.
//
// The outbox is keyed by run, and runs of every age append, so entries are
// written behind any position a pass reached, all the time. The position is
// therefore kept only where the store reports every put (putWatcher): each
// put lowers it, after its commit and before the commit returns; a pass
// raises it to what it left behind only if no put was reported since the
// pass began (the generation), because a put that commits during the pass
// may be below where the pass already was. Elsewhere (the SQL store, shared
// by several processes; a wrapped store) every pass starts from the
// beginning. Nothing of it is persisted: a new worker starts from the
// beginning too.
type resume struct {
	mu     sync.Mutex
	on     bool   // the store reports its puts
	gen    uint64 // puts reported so far
	from   []byte // the pass starts here (inclusive); nil: at the beginning
	cancel func()
}

// newResume watches st's outbox puts when st reports them.
func newResume(st store.Store) *resume {
	r := &resume{}
	if pw, ok := st.(putWatcher); ok {
		r.on = true
		r.cancel = pw.WatchPuts(runlog.OutboxPrefix(), r.lower)
	}
	return r
}

// start answers where a pass may start (nil: at the beginning) and the
// generation to hand to raise.
func (r *resume) start() ([]byte, uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.from, r.gen
}

// lower records an outbox entry put (or perhaps put) at key.
func (r *resume) lower(key []byte) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.gen++
	if r.from != nil && bytes.Compare(key, r.from) < 0 {
		r.from = bytes.Clone(key)
	}
}

// raise records that a pass begun at generation gen left no live entry
// below from.
func (r *resume) raise(from []byte, gen uint64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.on || r.gen != gen || from == nil {
		return
	}
	if r.from == nil || bytes.Compare(from, r.from) > 0 {
		r.from = bytes.Clone(from)
	}
}

// stop stops watching; every later pass starts from the beginning.
func (r *resume) stop() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		r.cancel()
		r.cancel = nil
	}
	r.on, r.from = false, nil
}

// scanFrom answers the first page's scan of a pass that starts at from.
func scanFrom(from []byte, limit int) *store.ScanParams {
	if from == nil {
		return &store.ScanParams{Prefix: runlog.OutboxPrefix(), Limit: limit}
	}
	return &store.ScanParams{Start: from, End: store.PrefixEnd(runlog.OutboxPrefix()), Limit: limit}
}

// after answers the least key greater than key.
func after(key []byte) []byte { return append(bytes.Clone(key), 0) }
