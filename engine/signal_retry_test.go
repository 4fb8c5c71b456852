package engine

import (
	"context"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// commitHook runs a function before the first commit that writes key.
type commitHook struct {
	store.Store
	mu   sync.Mutex
	key  []byte
	hook func()
}

func (s *commitHook) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	s.mu.Lock()
	hook := s.hook
	if hook != nil && writes(b, s.key) {
		s.hook = nil
	} else {
		hook = nil
	}
	s.mu.Unlock()
	if hook != nil {
		hook()
	}
	return s.Store.Commit(ctx, b)
}

func writes(b *store.Batch, key []byte) bool {
	for _, op := range b.Ops {
		if string(op.Key) == string(key) {
			return true
		}
	}
	return false
}

// A signal's decision that loses the race on the checkpoint is made again on
// the new state, and answered as that one decided: a pause refused while the
// run was PENDING, then accepted once another engine started it, is answered
// accepted, not with the first decision's refusal.
func TestSignal_ADecisionMadeAgainIsAnsweredAsItDecided(t *testing.T) {
	inner := memstore.New(memstore.Config{})
	hooked := &commitHook{Store: inner}
	a, b := setupWith(t, hooked), setupWith(t, inner)
	runID := submitOn(t, a.eng, "act-a", false) // PENDING: a pause is refused
	hooked.mu.Lock()
	hooked.key = runlog.CheckpointKey(runID)
	hooked.hook = func() { // between a's decision and its commit, b starts the run
		_, err := b.eng.StartRun(context.Background(), StartParams{TenantID: tenant, RunID: runID, Actor: "alice"})
		require.NoError(t, err)
	}
	hooked.mu.Unlock()

	res, err := a.eng.PauseRun(a.ctx, ControlParams{TenantID: tenant, RunID: runID, Actor: "op"})
	require.NoError(t, err, "the decision made again accepted the pause")
	require.Equal(t, runstate.RunPaused, res.Run.Status)
}
