package dispatch

import (
	"cmp"
	"slices"
	"sync"
	"time"
)

// PollerKey names one worker polling one queue of one tenant.
type PollerKey struct {
	Tenant, Queue, Worker string
}

// Poller is what this process knows of one poller: when it last polled, the
// polls it has open now, the task names it asked for and the tokens of the
// tasks this process handed it that no report has answered here yet.
type Poller struct {
	PollerKey
	LastPoll time.Time
	Polling  int
	Names    []string
	Tokens   []string
	// Published is when the engine last wrote the poller's record (zero:
	// never).
	Published time.Time
}

// Pollers remembers who polls in this process: the engine persists what it
// holds so that every process can list every poller. It holds only the
// pollers seen within its TTL, or still holding tasks, so memory stays
// bounded by the workers live now. It is safe for concurrent use.
type Pollers struct {
	mu      sync.Mutex
	byKey   map[PollerKey]*pollerEntry
	byToken map[string]PollerKey
}

// pollerEntry is one poller's mutable state, under Pollers.mu.
type pollerEntry struct {
	lastPoll  time.Time
	polling   int
	names     []string
	tokens    map[string]bool
	published time.Time
}

// maxPollerNames bounds the task names kept per poller (a poll may name
// up to a thousand; a listing needs only enough to recognise the worker).
const maxPollerNames = 64

// Begin records that a poll of key began at now, asking for names, and
// answers the function that records its end.
func (p *Pollers) Begin(key PollerKey, names []string, now time.Time) (end func(now time.Time)) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entry(key)
	e.lastPoll = latest(e.lastPoll, now)
	e.polling++
	e.names = boundedNames(names)
	return func(now time.Time) {
		p.mu.Lock()
		defer p.mu.Unlock()
		e := p.entry(key)
		e.lastPoll = latest(e.lastPoll, now)
		e.polling = max(e.polling-1, 0)
	}
}

// Handed records the tokens of tasks handed to the poller key: in flight
// until a report answers them (Reported) or the engine finds them no longer
// claimed (Settled).
func (p *Pollers) Handed(key PollerKey, tokens []string) {
	if len(tokens) == 0 {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.entry(key)
	for _, t := range tokens {
		e.tokens[t] = true
		p.byToken[t] = key
	}
}

// Reported forgets a token a report answered.
func (p *Pollers) Reported(token string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	key, ok := p.byToken[token]
	if !ok {
		return
	}
	delete(p.byToken, token)
	if e := p.byKey[key]; e != nil {
		delete(e.tokens, token)
	}
}

// Snapshot answers every poller, sorted by tenant, queue and worker.
func (p *Pollers) Snapshot() []Poller { return p.copies(func(*pollerEntry) bool { return true }) }

// Due answers the pollers never published or last published at or before
// before, sorted as Snapshot sorts them: those whose record is due.
func (p *Pollers) Due(before time.Time) []Poller {
	return p.copies(func(e *pollerEntry) bool { return e.published.IsZero() || !e.published.After(before) })
}

// copies answers a copy of each poller keep selects, sorted.
func (p *Pollers) copies(keep func(*pollerEntry) bool) []Poller {
	p.mu.Lock()
	defer p.mu.Unlock()
	var out []Poller
	for k, e := range p.byKey {
		if !keep(e) {
			continue
		}
		tokens := make([]string, 0, len(e.tokens))
		for t := range e.tokens {
			tokens = append(tokens, t)
		}
		slices.Sort(tokens)
		out = append(out, Poller{PollerKey: k, LastPoll: e.lastPoll, Polling: e.polling,
			Names: slices.Clone(e.names), Tokens: tokens, Published: e.published})
	}
	slices.SortFunc(out, func(a, b Poller) int { return compareKeys(a.PollerKey, b.PollerKey) })
	return out
}

// Settled records what the engine found and wrote for the poller key at
// now: the tokens of the snapshot that are no longer claimed go, and the
// poller's record was written.
func (p *Pollers) Settled(key PollerKey, gone []string, now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.byKey[key]
	if e == nil {
		return
	}
	for _, t := range gone {
		delete(e.tokens, t)
		delete(p.byToken, t)
	}
	e.published = now
}

// Forget drops the poller key unless it polled after since or holds tasks
// or an open poll; it answers whether it was dropped.
func (p *Pollers) Forget(key PollerKey, since time.Time) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	e := p.byKey[key]
	if e == nil {
		return true
	}
	if e.polling > 0 || len(e.tokens) > 0 || e.lastPoll.After(since) {
		return false
	}
	delete(p.byKey, key)
	return true
}

// entry answers key's entry, made on first sight; p.mu is held.
func (p *Pollers) entry(key PollerKey) *pollerEntry {
	if p.byKey == nil {
		p.byKey, p.byToken = map[PollerKey]*pollerEntry{}, map[string]PollerKey{}
	}
	e := p.byKey[key]
	if e == nil {
		e = &pollerEntry{tokens: map[string]bool{}}
		p.byKey[key] = e
	}
	return e
}

// boundedNames answers names sorted, at most maxPollerNames of them.
func boundedNames(names []string) []string {
	out := slices.Clone(names)
	slices.Sort(out)
	out = slices.Compact(out)
	return out[:min(len(out), maxPollerNames)]
}

func latest(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

func compareKeys(a, b PollerKey) int {
	return cmp.Or(cmp.Compare(a.Tenant, b.Tenant), cmp.Compare(a.Queue, b.Queue), cmp.Compare(a.Worker, b.Worker))
}
