package dispatch

import (
	"bytes"
	"sync"
)

// QueueHints remembers, for each ready queue, a key below which no entry is
// live, so that a poll's scan starts past the entries of tasks already
// claimed. A claimed task's entry is deleted, and an LSM store (Pebble) steps
// over every deleted entry at the head of the queue until compaction: without
// a hint, each poll paid for every task claimed since.
//
// A hint is only sound when this process sees every insert into its queues,
// so it is kept only under single-owner ownership (a nil *QueueHints keeps
// none). Every insert lowers the hint after its commit and before the
// pollers are woken (Dispatcher.Settle); a scan raises it to the first live
// entry it found only if no insert happened since the scan began (the
// generation), because an insert that commits during the scan may not be in
// what the scan saw.
type QueueHints struct {
	mu  sync.Mutex
	gen uint64
	low map[string][]byte // queue prefix → no live entry sorts below this key
}

// NewQueueHints answers hints that know of no entry yet.
func NewQueueHints() *QueueHints { return &QueueHints{low: map[string][]byte{}} }

// Start answers where a scan of the queue whose entries begin with prefix
// may start (at least from), and the generation to pass to Raise.
func (h *QueueHints) Start(prefix, from []byte) ([]byte, uint64) {
	if h == nil {
		return from, 0
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if low, ok := h.low[string(prefix)]; ok && bytes.Compare(low, from) > 0 {
		return low, h.gen
	}
	return from, h.gen
}

// Raise records that, as of a scan begun at generation gen, no entry of
// the queue below key was live.
func (h *QueueHints) Raise(prefix, key []byte, gen uint64) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.gen != gen {
		return
	}
	if low, ok := h.low[string(prefix)]; !ok || bytes.Compare(key, low) > 0 {
		h.low[string(prefix)] = bytes.Clone(key)
	}
}

// Lower records an entry inserted (or possibly inserted) into the queue.
func (h *QueueHints) Lower(prefix, key []byte) {
	if h == nil {
		return
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	h.gen++
	if low, ok := h.low[string(prefix)]; ok && bytes.Compare(key, low) < 0 {
		h.low[string(prefix)] = bytes.Clone(key)
	}
}
