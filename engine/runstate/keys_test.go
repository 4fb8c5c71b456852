package runstate

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestKeys_TheRecordHoldsExactlyTheKeysAdded: over random sequences of
// keys (repeats, counters that skip, several logical and engine attempts,
// the run and two steps), AddKey answers whether the key was new, and
// HasKey answers true for exactly the keys added.
func TestKeys_TheRecordHoldsExactlyTheKeysAdded(t *testing.T) {
	types := EventTypes()
	scopes := []string{RunStepID, "a", "b"}
	type key struct {
		scope, typ      string
		logical, engine int
	}
	for seed := range uint64(100) {
		r := rand.New(rand.NewPCG(seed, 7))
		s := &State{RunID: "r", KeysTracked: true, Steps: []*StepState{{ActionID: "a"}, {ActionID: "b"}}}
		added := map[key]bool{}
		for range 1 + r.IntN(80) {
			k := key{scopes[r.IntN(len(scopes))], types[r.IntN(len(types))], 1 + r.IntN(6), 1 + r.IntN(4)}
			if !KeyHasEngineAttempt(k.typ) {
				k.engine = 0
			}
			require.Equal(t, !added[k], s.AddKey(k.typ, k.scope, k.logical, k.engine), "seed %d: AddKey(%v)", seed, k)
			added[k] = true
		}
		for _, scope := range scopes {
			for _, typ := range types {
				for l := 0; l <= 7; l++ {
					for e := 0; e <= 5; e++ {
						k := key{scope, typ, max(l, 1), e}
						if !KeyHasEngineAttempt(typ) {
							k.engine = 0
						}
						require.Equal(t, added[k], s.HasKey(typ, scope, l, e), fmt.Sprintf("seed %d: HasKey(%v)", seed, k))
					}
				}
			}
		}
		require.Equal(t, s.HasKey(EvRunStarted, RunStepID, 1, 0), s.HasKey(EvRunStarted, "", 1, 0), "the run's scope is RUN or empty")
	}
}

// TestKeys_EventBitsAreDistinctAndEveryTypeHasOne: a type's bit is its own.
func TestKeys_EventBitsAreDistinctAndEveryTypeHasOne(t *testing.T) {
	seen := map[uint64]string{}
	for typ, bit := range eventBits {
		require.Equal(t, 1, popcount(bit), typ)
		require.Empty(t, seen[bit], "%s and %s share a bit", typ, seen[bit])
		seen[bit] = typ
	}
	require.Len(t, eventBits, 36, "every event type of events.go and search.go has a bit")
}

func popcount(x uint64) int {
	n := 0
	for ; x != 0; x &= x - 1 {
		n++
	}
	return n
}
