package pebblestore

import (
	"bytes"
	"sync"

	"github.com/weft-dev/weft/store"
)

// WatchPuts calls fn after every commit group that put — or, when its apply
// failed, may have put — a key that begins with prefix, with the least such
// key of the group. fn runs on the committing goroutine once the group's
// writes are visible to Get and Scan, and before any of the group's Commit
// calls returns; it must be quick and must not call the store. cancel stops
// the calls (one already under way may still finish).
//
// Pebble's directory lock keeps every other process out of the store, so a
// watcher hears of every put: that is what lets a reader of a prefix keep a
// position in it, as the export worker does for the outbox.
func (s *Store) WatchPuts(prefix []byte, fn func(least []byte)) (cancel func()) {
	return s.watchers.add(bytes.Clone(prefix), fn)
}

// watchers are the WatchPuts callbacks of a store.
type watchers struct {
	mu   sync.Mutex
	next uint64
	list map[uint64]watcher
}

type watcher struct {
	prefix []byte
	fn     func(least []byte)
}

// heard is one call a group owes a watcher.
type heard struct {
	fn    func(least []byte)
	least []byte
}

func (ws *watchers) add(prefix []byte, fn func([]byte)) func() {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	if ws.list == nil {
		ws.list = map[uint64]watcher{}
	}
	id := ws.next
	ws.next++
	ws.list[id] = watcher{prefix: prefix, fn: fn}
	return func() {
		ws.mu.Lock()
		defer ws.mu.Unlock()
		delete(ws.list, id)
	}
}

// owed answers the calls the accepted batches of g owe the watchers. It reads
// the batches, so the leader calls it before it lets the group's callers go.
func (ws *watchers) owed(g *group) []heard {
	ws.mu.Lock()
	defer ws.mu.Unlock()
	var out []heard
	for _, w := range ws.list {
		if least := leastPut(g, w.prefix); least != nil {
			out = append(out, heard{fn: w.fn, least: least})
		}
	}
	return out
}

// leastPut answers the least key under prefix that an accepted batch of g
// puts (a copy), or nil.
func leastPut(g *group, prefix []byte) []byte {
	var least []byte
	for _, r := range g.reqs {
		if r.err != nil {
			continue
		}
		for _, op := range r.batch.Ops {
			if op.Kind == store.OpPut && bytes.HasPrefix(op.Key, prefix) && (least == nil || bytes.Compare(op.Key, least) < 0) {
				least = op.Key
			}
		}
	}
	return bytes.Clone(least)
}

func notify(calls []heard) {
	for _, c := range calls {
		c.fn(c.least)
	}
}
