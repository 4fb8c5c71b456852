package storetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

// Harness tells the suite how to get stores from one backend.
type Harness struct {
	// Open returns a fresh, empty store that no other test sees, and
	// registers its cleanup with t. It is called once per test, possibly from
	// parallel tests.
	Open func(t testing.TB) *Instance
}

// Instance is one isolated store handed to one test.
type Instance struct {
	// Store is the open store.
	Store store.Store
	// Reopen opens the same underlying storage again, after the suite has
	// closed Store. It is nil for backends that are not durable; the
	// durability rules then skip.
	Reopen func(t testing.TB) store.Store
	// Peer, when set, opens another handle onto the same storage while Store
	// stays open, as a second process would (for SQL, another pool). The
	// concurrency rules spread their goroutines over peers, so that races
	// are settled by the storage itself and not only inside one handle.
	Peer func(t testing.TB) store.Store
}

// handles returns n handles onto inst's storage: Store and, when the backend
// offers peers, n-1 of them; otherwise Store n times.
func (inst *Instance) handles(t testing.TB, n int) []store.Store {
	hs := []store.Store{inst.Store}
	for len(hs) < n {
		if inst.Peer == nil {
			hs = append(hs, inst.Store)
			continue
		}
		hs = append(hs, inst.Peer(t))
	}
	return hs
}

type rule struct {
	name string
	run  func(t *testing.T, h Harness)
}

// Exercise runs every rule of the storage contract against h as subtests.
func Exercise(t *testing.T, h Harness) {
	t.Helper()
	rules := slices.Concat(basicRules, conditionRules, concurrencyRules, scanRules, formatRules, lifecycleRules)
	for _, r := range rules {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			r.run(t, h)
		})
	}
}

// ctx returns a context bounded well inside the test binary's timeout.
func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	t.Cleanup(cancel)
	return c
}

func requireCapability(t testing.TB, s store.Store, name string, has func(store.Capabilities) bool) {
	t.Helper()
	if !has(s.Capabilities()) {
		t.Skipf("backend %q does not declare %s: rule does not apply", s.Capabilities().Backend, name)
	}
}

func requireConditional(t testing.TB, s store.Store) {
	t.Helper()
	requireCapability(t, s, store.CapabilityConditionalBatch, func(c store.Capabilities) bool { return c.ConditionalBatch })
}

func put(t testing.TB, s store.Store, key, value []byte) uint64 {
	t.Helper()
	res, err := s.Commit(ctx(t), &store.Batch{Ops: []store.Op{store.Put(key, value)}})
	require.NoError(t, err)
	require.Len(t, res.Versions, 1)
	require.NotZero(t, res.Versions[0])
	return res.Versions[0]
}

func del(t testing.TB, s store.Store, key []byte) {
	t.Helper()
	_, err := s.Commit(ctx(t), &store.Batch{Ops: []store.Op{store.Delete(key)}})
	require.NoError(t, err)
}

func get(t testing.TB, s store.Store, key []byte) store.Item {
	t.Helper()
	item, err := s.Get(ctx(t), key)
	require.NoError(t, err, "get %q", key)
	require.Equal(t, key, item.Key)
	return item
}

func requireAbsent(t testing.TB, s store.Store, key []byte) {
	t.Helper()
	_, err := s.Get(ctx(t), key)
	require.ErrorIs(t, err, store.ErrNotFound, "key %q", key)
}

// scanAll follows Next until the scan is complete.
func scanAll(t testing.TB, s store.Store, p store.ScanParams) []store.Item {
	t.Helper()
	var all []store.Item
	for {
		res, err := s.Scan(ctx(t), &p)
		require.NoError(t, err)
		all = append(all, res.Items...)
		if res.Next == nil {
			return all
		}
		require.NotEmpty(t, res.Items, "a page with Next must hold items")
		p.After = res.Next
	}
}

func keysOf(items []store.Item) []string {
	ks := make([]string, len(items))
	for i, it := range items {
		ks[i] = string(it.Key)
	}
	return ks
}

// isContention reports errors after which a compare-and-set loop re-reads and
// tries again: a lost race, or a conflict the backend could not retry away.
func isContention(err error) bool {
	return errors.Is(err, store.ErrConditionFailed) || errors.Is(err, store.ErrRetryable)
}
