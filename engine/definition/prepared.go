package definition

import (
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"hash/maphash"
	"maps"
	"math"
	"slices"
	"sync"
)

// Prepared is a definition as a submission stores it: with its defaults,
// validated, its canonical JSON (json.Marshal of the defaulted definition,
// what a run record holds, docs/persisted-format.md) and that JSON's
// SHA-256, the plan SHA. It is shared by every run of the definition and
// must not be changed.
type Prepared struct {
	Definition Definition
	JSON       []byte
	PlanSHA256 string
}

// Prepare answers d prepared: WithDefaults, Validate (whose *Error it
// answers for an invalid d), json.Marshal and SHA-256.
func Prepare(d Definition) (*Prepared, error) {
	def := d.WithDefaults()
	if err := def.Validate(); err != nil {
		return nil, err
	}
	canonical, err := json.Marshal(def)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(canonical)
	return &Prepared{Definition: def, JSON: canonical, PlanSHA256: hex.EncodeToString(sum[:])}, nil
}

// PreparedCache remembers the definitions it prepared, so that a definition
// submitted again — a client running one workflow many times — is not
// defaulted, validated, encoded and hashed each time. An entry is found by a
// hash of every field of the definition as submitted and served only to a
// definition equal to it field by field (Equal: exact, nil and empty told
// apart, floats by their bits), so one definition is never answered
// another's record; a hash collision is a miss. Invalid definitions, and
// definitions whose JSON exceeds maxPreparedJSON, are not kept. It is
// bounded: when full, an entry is dropped for each one added.
type PreparedCache struct {
	seed    maphash.Seed
	max     int
	mu      sync.Mutex
	entries map[uint64]*preparedEntry
}

// preparedEntry is a definition as submitted (a private copy) and its
// preparation; never changed once made.
type preparedEntry struct {
	submitted Definition
	prepared  *Prepared
}

// maxPreparedJSON is the largest canonical JSON a PreparedCache keeps:
// bigger definitions are prepared each time, so that the cache holds at most
// max × maxPreparedJSON of JSON (and the definitions it encodes).
const maxPreparedJSON = 32 << 10

// NewPreparedCache answers an empty cache of at most max definitions.
func NewPreparedCache(max int) *PreparedCache {
	return &PreparedCache{seed: maphash.MakeSeed(), max: max, entries: make(map[uint64]*preparedEntry, max)}
}

// Prepare answers Prepare(d), from the cache when d was prepared before.
func (c *PreparedCache) Prepare(d Definition) (*Prepared, error) {
	key := c.hash(&d)
	c.mu.Lock()
	e := c.entries[key]
	c.mu.Unlock()
	if e != nil && Equal(&e.submitted, &d) {
		return e.prepared, nil
	}
	p, err := Prepare(d)
	if err != nil || len(p.JSON) > maxPreparedJSON {
		return p, err
	}
	e = &preparedEntry{submitted: d.Clone(), prepared: p}
	c.mu.Lock()
	PutBounded(c.entries, key, e, c.max)
	c.mu.Unlock()
	return p, nil
}

// Len answers how many definitions the cache holds.
func (c *PreparedCache) Len() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.entries)
}

// hasher writes a definition's fields to a maphash.
type hasher struct {
	h   maphash.Hash
	buf [8]byte
}

func (h *hasher) str(s string) { h.u64(uint64(len(s))); h.h.WriteString(s) }
func (h *hasher) raw(b []byte) { h.u64(rawTag(b)); h.h.Write(b) }
func (h *hasher) u64(v uint64) {
	binary.LittleEndian.PutUint64(h.buf[:], v)
	h.h.Write(h.buf[:])
}
func (h *hasher) bool(b bool) {
	if b {
		h.h.WriteByte(1)
	} else {
		h.h.WriteByte(0)
	}
}

// rawTag is a byte slice's length, with nil told apart from empty.
func rawTag(b []byte) uint64 {
	if b == nil {
		return math.MaxUint64
	}
	return uint64(len(b))
}

// hash answers a hash of every field of d (Equal's fields).
func (c *PreparedCache) hash(d *Definition) uint64 {
	var h hasher
	h.h.SetSeed(c.seed)
	h.str(d.PlanID)
	h.str(d.PlanVersion)
	h.u64(uint64(d.Timeout))
	h.str(string(d.Backpressure))
	h.u64(uint64(d.MaxConcurrentRuns))
	h.u64(uint64(d.Priority))
	h.runConcurrency(d.Concurrency)
	h.fairness(d.Fairness)
	h.bool(d.RequiresApproval)
	h.str(d.DisplayName)
	h.bool(d.DAG)
	h.str(d.ResultActionID)
	h.u64(uint64(d.Retention))
	h.bool(d.SearchAttributes == nil)
	for _, name := range slices.Sorted(maps.Keys(d.SearchAttributes)) {
		h.str(name)
		h.str(d.SearchAttributes[name])
	}
	h.bool(d.Actions == nil)
	h.u64(uint64(len(d.Actions)))
	for i := range d.Actions {
		a := &d.Actions[i]
		h.str(a.ID)
		h.u64(uint64(a.Order))
		h.str(a.Activity)
		h.str(a.Queue)
		h.bool(a.DependsOn == nil)
		h.u64(uint64(len(a.DependsOn)))
		for _, dep := range a.DependsOn {
			h.str(dep)
		}
		h.raw(a.Input)
		h.retry(&a.Retry)
		h.u64(uint64(a.Timeout))
		h.u64(uint64(a.HeartbeatTimeout))
		h.u64(uint64(a.ScheduleToStartTimeout))
		h.str(string(a.OnFailure))
		h.str(string(a.Completion))
		h.bool(a.WaitForSignal != nil)
		if w := a.WaitForSignal; w != nil {
			h.str(w.SignalName)
			h.u64(uint64(w.Timeout))
		}
		h.u64(uint64(a.ManualTimeout))
		h.bool(a.Compensation != nil)
		if k := a.Compensation; k != nil {
			h.str(k.Operation)
			h.raw(k.Input)
			h.u64(uint64(k.Timeout))
			h.retry(&k.Retry)
			h.str(k.Queue)
		}
		h.bool(a.Secrets == nil)
		h.u64(uint64(len(a.Secrets)))
		for _, s := range a.Secrets {
			h.str(s.Name)
			h.str(s.Ref)
		}
		h.str(a.When)
		h.bool(a.Repeat != nil)
		if r := a.Repeat; r != nil {
			h.str(r.Until)
			h.u64(uint64(r.MaxIterations))
		}
		h.u64(uint64(a.Sleep))
		h.str(a.SleepUntil)
		h.flow(a)
		h.fairness(a.Fairness)
		h.subWorkflow(a.Workflow, a.ParentClose)
		h.str(a.ForEach)
		h.u64(uint64(a.MaxConcurrency))
	}
	return h.h.Sum64()
}

func (h *hasher) retry(r *RetryPolicy) {
	h.u64(uint64(r.MaxAttempts))
	h.str(string(r.Strategy))
	h.u64(uint64(r.InitialBackoff))
	h.u64(math.Float64bits(r.Multiplier))
	h.u64(uint64(r.MaxBackoff))
	h.bool(r.RetryableErrors == nil)
	h.u64(uint64(len(r.RetryableErrors)))
	for _, c := range r.RetryableErrors {
		h.str(string(c))
	}
}

// Equal reports whether a and b are the same definition field by field:
// strings and numbers equal (floats by their bits), nil slices and pointers
// only equal to nil, raw JSON byte for byte.
func Equal(a, b *Definition) bool {
	return a.PlanID == b.PlanID && a.PlanVersion == b.PlanVersion && a.Timeout == b.Timeout &&
		a.Backpressure == b.Backpressure && a.MaxConcurrentRuns == b.MaxConcurrentRuns && a.Priority == b.Priority &&
		equalPtr(a.Concurrency, b.Concurrency, equalRunConcurrency) &&
		equalPtr(a.Fairness, b.Fairness, equalFairness) &&
		a.RequiresApproval == b.RequiresApproval && a.DisplayName == b.DisplayName && a.DAG == b.DAG &&
		a.ResultActionID == b.ResultActionID && a.Retention == b.Retention &&
		(a.SearchAttributes == nil) == (b.SearchAttributes == nil) && maps.Equal(a.SearchAttributes, b.SearchAttributes) &&
		(a.Actions == nil) == (b.Actions == nil) && equalActions(a.Actions, b.Actions)
}

func equalActions(a, b []Action) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equalAction(&a[i], &b[i]) {
			return false
		}
	}
	return true
}

func equalAction(a, b *Action) bool {
	return a.ID == b.ID && a.Order == b.Order && a.Activity == b.Activity && a.Queue == b.Queue &&
		(a.DependsOn == nil) == (b.DependsOn == nil) && slices.Equal(a.DependsOn, b.DependsOn) &&
		equalRaw(a.Input, b.Input) && equalRetry(&a.Retry, &b.Retry) && a.Timeout == b.Timeout &&
		a.HeartbeatTimeout == b.HeartbeatTimeout && a.ScheduleToStartTimeout == b.ScheduleToStartTimeout &&
		a.OnFailure == b.OnFailure && a.Completion == b.Completion && a.ManualTimeout == b.ManualTimeout &&
		equalPtr(a.WaitForSignal, b.WaitForSignal, func(x, y *SignalWait) bool { return *x == *y }) &&
		equalPtr(a.Compensation, b.Compensation, equalHook) &&
		(a.Secrets == nil) == (b.Secrets == nil) && slices.Equal(a.Secrets, b.Secrets) &&
		a.When == b.When && equalPtr(a.Repeat, b.Repeat, func(x, y *Repeat) bool { return *x == *y }) &&
		a.Sleep == b.Sleep && a.SleepUntil == b.SleepUntil &&
		equalPtr(a.Concurrency, b.Concurrency, equalConcurrency) && equalPtr(a.Throttle, b.Throttle, equalThrottle) &&
		equalPtr(a.Fairness, b.Fairness, equalFairness) &&
		a.ParentClose == b.ParentClose && equalPtr(a.Workflow, b.Workflow, equalSubWorkflow) &&
		a.ForEach == b.ForEach && a.MaxConcurrency == b.MaxConcurrency
}

func equalHook(a, b *CompensationHook) bool {
	return a.Operation == b.Operation && equalRaw(a.Input, b.Input) && a.Timeout == b.Timeout &&
		equalRetry(&a.Retry, &b.Retry) && a.Queue == b.Queue
}

func equalRetry(a, b *RetryPolicy) bool {
	return a.MaxAttempts == b.MaxAttempts && a.Strategy == b.Strategy && a.InitialBackoff == b.InitialBackoff &&
		math.Float64bits(a.Multiplier) == math.Float64bits(b.Multiplier) && a.MaxBackoff == b.MaxBackoff &&
		(a.RetryableErrors == nil) == (b.RetryableErrors == nil) && slices.Equal(a.RetryableErrors, b.RetryableErrors)
}

func equalRaw(a, b json.RawMessage) bool {
	return (a == nil) == (b == nil) && bytes.Equal(a, b)
}

// equalPtr reports whether a and b are both nil, or both set and eq.
func equalPtr[T any](a, b *T, eq func(x, y *T) bool) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return eq(a, b)
}
