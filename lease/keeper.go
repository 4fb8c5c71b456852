package lease

import (
	"context"
	"sync"
	"time"
)

// Keeper holds the leases one owner takes on many names, for as long as they
// are in use and no longer. One goroutine renews them all, every TTL/3, and
// only while some are held: each round renews a lease that was used since the
// previous round (or is in use now), and gives up one that was not. A holder
// that takes a name once and then waits — for a worker, a timer, a human —
// therefore costs no goroutine, no renewal and no lease after at most two
// rounds; when it needs the name again, it takes it again, as a new tenure.
//
// Each holding from acquisition to release or loss is one Tenure, with a
// State of the holder's own that starts at V's zero value: the engine keeps
// its fencing epoch there, so that a new tenure never inherits what an old
// one wrote.
//
// The leases stay what the package says they are, a way to avoid duplicate
// work: a release of an idle tenure that races with a new Take of the same
// name (the manager knows only the owner) may delete the new tenure's lease,
// which its next renewal then reports lost.
type Keeper[V any] struct {
	m     Manager
	owner string
	ttl   time.Duration

	mu      sync.Mutex
	held    map[string]*Tenure[V]
	running bool          // the renewer goroutine is running
	kick    chan struct{} // wakes the renewer for a round now
}

// Tenure is one continuous holding of a lease by a Keeper.
type Tenure[V any] struct {
	k      *Keeper[V]
	l      Lease
	ctx    context.Context
	cancel context.CancelFunc
	busy   int  // uses in progress (under k.mu)
	used   bool // used since the last round (under k.mu)

	// State is the holder's own state for this tenure, zero at its start.
	// The Keeper never touches it; the holder synchronises its own access.
	State V
}

// NewKeeper answers a keeper of leases of ttl, taken from m for owner. Take
// checks both.
func NewKeeper[V any](m Manager, owner string, ttl time.Duration) *Keeper[V] {
	return &Keeper[V]{m: m, owner: owner, ttl: ttl, held: map[string]*Tenure[V]{}, kick: make(chan struct{}, 1)}
}

// Take starts a use of the lease on name: it joins the tenure this keeper
// already holds, or acquires the lease for a new one. It answers ErrHeld when
// another owner holds the lease. Every Tenure taken must be given back with
// Done once the work under it is finished.
func (k *Keeper[V]) Take(ctx context.Context, name string) (*Tenure[V], error) {
	if err := validate(name, k.owner, k.ttl); err != nil {
		return nil, err
	}
	if t := k.join(name); t != nil {
		return t, nil
	}
	l, err := k.m.Acquire(ctx, name, k.owner, k.ttl)
	if err != nil {
		return nil, err
	}
	return k.insert(l), nil
}

// join answers a live tenure of name, counting a new use of it.
func (k *Keeper[V]) join(name string) *Tenure[V] {
	k.mu.Lock()
	defer k.mu.Unlock()
	t := k.held[name]
	if t == nil || t.ctx.Err() != nil {
		return nil
	}
	t.busy++
	t.used = true
	return t
}

// insert starts a tenure of a lease just acquired, unless a concurrent Take
// of the same name started one first: then the acquisition (a renewal of the
// same owner's lease) joins that one.
func (k *Keeper[V]) insert(l Lease) *Tenure[V] {
	k.mu.Lock()
	defer k.mu.Unlock()
	if t := k.held[l.Name]; t != nil && t.ctx.Err() == nil {
		t.busy++
		t.used = true
		return t
	}
	ctx, cancel := context.WithCancel(context.Background())
	t := &Tenure[V]{k: k, l: l, ctx: ctx, cancel: cancel, busy: 1, used: true}
	k.held[l.Name] = t
	if !k.running {
		k.running = true
		go k.renew()
	}
	return t
}

// Context is cancelled when the tenure ends: its lease was lost (a renewal
// failed) or given up. Work done under the tenure uses it, so that it stops.
func (t *Tenure[V]) Context() context.Context { return t.ctx }

// Done ends one use of the tenure. The lease stays held until a whole round
// passes without a use.
func (t *Tenure[V]) Done() {
	t.k.mu.Lock()
	defer t.k.mu.Unlock()
	t.busy--
}

// Drop ends the tenure now and releases its lease: its holder learned that
// it no longer owns the name. Uses in progress see the context cancelled;
// each must still call Done.
func (t *Tenure[V]) Drop() {
	if t.k.forget(t) {
		_ = t.k.m.Release(context.Background(), t.l)
	}
}

// forget removes t from the held leases and cancels its context; it answers
// whether t was still held.
func (k *Keeper[V]) forget(t *Tenure[V]) bool {
	k.mu.Lock()
	held := k.held[t.l.Name] == t
	if held {
		delete(k.held, t.l.Name)
	}
	k.mu.Unlock()
	t.cancel()
	return held
}

// Len answers how many leases the keeper holds.
func (k *Keeper[V]) Len() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.held)
}

// ReleaseAll ends every tenure and releases its lease (the owner is
// stopping); the renewer goroutine exits. The keeper stays usable.
func (k *Keeper[V]) ReleaseAll() {
	k.mu.Lock()
	all := make([]*Tenure[V], 0, len(k.held))
	for _, t := range k.held {
		all = append(all, t)
	}
	k.mu.Unlock()
	for _, t := range all {
		t.Drop()
	}
	select {
	case k.kick <- struct{}{}:
	default:
	}
}

// renew is the renewer goroutine: a round every TTL/3, until a round finds
// nothing held.
func (k *Keeper[V]) renew() {
	tick := time.NewTicker(k.ttl / 3)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
		case <-k.kick:
		}
		if !k.round() {
			return
		}
	}
}

// round renews each lease used since the previous round and gives up the
// others. It answers false, and the renewer exits, when nothing is held.
func (k *Keeper[V]) round() bool {
	renew, idle := k.sort()
	// A renewal that cannot finish before the next round is due counts as
	// failed: the lease may be gone by then, so the work under it stops.
	deadline := time.Now().Add(k.ttl / 3)
	for _, t := range renew {
		ctx, cancel := context.WithDeadline(t.ctx, deadline)
		err := k.m.Renew(ctx, t.l)
		cancel()
		if err != nil {
			k.forget(t) // lost, or dropped meanwhile: work under it stops
		}
	}
	for _, t := range idle { // after the renewals, which work depends on
		_ = k.m.Release(context.Background(), t.l)
	}
	return len(renew) > 0
}

// sort takes the idle tenures (no use since the previous round) out of the
// held leases, ending them, and answers them with those to renew, whose use
// marks it clears for the next round. When nothing stays held, the renewer
// is marked stopped under the same lock, so that the next insert starts
// another.
func (k *Keeper[V]) sort() (renew, idle []*Tenure[V]) {
	k.mu.Lock()
	defer k.mu.Unlock()
	for name, t := range k.held {
		if t.busy == 0 && !t.used {
			delete(k.held, name)
			t.cancel()
			idle = append(idle, t)
			continue
		}
		t.used = false
		renew = append(renew, t)
	}
	if len(renew) == 0 {
		k.running = false
	}
	return renew, idle
}
