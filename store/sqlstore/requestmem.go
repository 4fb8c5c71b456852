package sqlstore

import (
	"math/bits"
	"sync"

	"github.com/weft-dev/weft/store"
)

// requestMem is the memory of a request (newRequest): the request itself
// and its copy of its batch, the conditions, the ops, one buffer for all
// their keys and values, and the hashes of their keys.
type requestMem struct {
	req   request
	buf   []byte
	ops   []store.Op
	conds []store.Condition
	keys  keyHashes
}

// requestMems recycles requests' memory, per store, from one request to a
// later one. A request holds its memory until both its holders let go of it
// (request.letGo): the caller once it has its answer, or gives up waiting;
// the leader once it has finished the request, or never took it. Nothing a
// request answers holds that memory: results are allocated afresh, and a
// *store.ConditionFailedError gets keys of its own (checkConditions). Nothing
// else holds the request by then: a leader drops a finished group, and the
// queue a request its caller withdrew (committer.abandon).
type requestMems struct {
	pool sync.Pool
	// poison, for tests only, fills given-back memory with keys and values
	// no batch holds, where recycling it unchanged would hide a use after it
	// was given back.
	poison bool
	// hash, for tests only, replaces hashKey (to make distinct keys
	// collide).
	hash func([]byte) uint64
}

// keyHash answers the hash of the requests' keys: hashKey unless a test
// replaced it.
func (mems *requestMems) keyHash() func([]byte) uint64 {
	if mems == nil || mems.hash == nil {
		return hashKey
	}
	return mems.hash
}

// Memory grown past these bounds is not kept: one large batch must not pin
// its memory for good.
const (
	maxKeptRequestBytes = 64 << 10
	maxKeptRequestOps   = 1024
)

// take answers memory for a batch of size key and value bytes, ops ops and
// conds conditions (and ops+conds key hashes): recycled when mems has some large enough, else new
// (rounded up to a power of two, so that a recycled one fits the batches of
// similar size that follow). A nil mems answers memory of the batch's exact
// size, never recycled.
func (mems *requestMems) take(size, ops, conds int) *requestMem {
	if mems == nil {
		return &requestMem{buf: make([]byte, 0, size), ops: make([]store.Op, ops), conds: make([]store.Condition, conds),
			keys: make(keyHashes, ops+conds)}
	}
	m, _ := mems.pool.Get().(*requestMem)
	if m == nil {
		m = new(requestMem)
	}
	if m.buf == nil || cap(m.buf) < size { // never nil: an empty value copied from it would be NULL
		m.buf = make([]byte, 0, roundUp(size))
	}
	if cap(m.ops) < ops {
		m.ops = make([]store.Op, roundUp(ops))
	}
	if cap(m.conds) < conds {
		m.conds = make([]store.Condition, roundUp(conds))
	}
	if cap(m.keys) < ops+conds {
		m.keys = make(keyHashes, roundUp(ops+conds))
	}
	m.ops, m.conds, m.keys = m.ops[:ops], m.conds[:conds], m.keys[:ops+conds]
	return m
}

// roundUp answers the power of two at or above n.
func roundUp(n int) int {
	if n <= 1 {
		return n
	}
	return 1 << bits.Len(uint(n-1))
}

// give takes back a request's memory once nothing reads it: cleared of the
// references it holds (or poisoned), or dropped when it grew past the bounds.
func (mems *requestMems) give(m *requestMem) {
	if mems == nil || cap(m.buf) > maxKeptRequestBytes || cap(m.ops) > maxKeptRequestOps || cap(m.conds) > maxKeptRequestOps ||
		cap(m.keys) > 2*maxKeptRequestOps {
		return
	}
	m.req.ctx, m.req.out = nil, outcome{} // nothing the memory keeps alive
	if mems.poison {
		m.fillWithPoison()
	} else {
		// Entries past their length were cleared when given back before.
		// The key hashes hold no reference: they are overwritten, not
		// cleared.
		clear(m.ops)
		clear(m.conds)
	}
	m.buf = m.buf[:0]
	mems.pool.Put(m)
}

// poisonKey is the key and the value of every op and condition of poisoned
// memory, and its buffer holds nothing else: no batch commits it. Its key
// hashes are all poisonHash.
var poisonKey = []byte("recycled-request-poison")

// poisonHash is every key hash of poisoned memory.
const poisonHash = 0x5eed_dead_5eed_dead

// fillWithPoison overwrites every byte, op, condition and key hash of m with
// poison, and the request's counts and state with values no new request
// starts with.
func (m *requestMem) fillWithPoison() {
	m.req.size, m.req.nPuts, m.req.waited = -1, -1, true
	m.req.state.Store(stateAbandoned)
	buf := m.buf[:cap(m.buf)]
	for i := range buf {
		buf[i] = poisonKey[i%len(poisonKey)]
	}
	for i := range m.ops[:cap(m.ops)] {
		m.ops[:cap(m.ops)][i] = store.Put(poisonKey, poisonKey)
	}
	for i := range m.conds[:cap(m.conds)] {
		m.conds[:cap(m.conds)][i] = store.IfVersion(poisonKey, 1<<62)
	}
	for i := range m.keys[:cap(m.keys)] {
		m.keys[:cap(m.keys)][i] = poisonHash
	}
}
