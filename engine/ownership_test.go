package engine

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/store/nocasstore"
)

func TestOwnership_CASRequiredWithoutConditionalBatchFailsBeforeAnythingStarts(t *testing.T) {
	st := nocasstore.New()
	eng, err := New(Config{Store: st, Ownership: CASRequired})
	require.Nil(t, eng, "no engine, so no lease, recovery loop or queue poll can start")
	var capErr *CheckpointOwnershipCapabilityError
	require.ErrorAs(t, err, &capErr)
	require.Equal(t, "conditionalBatch", capErr.Capability)
	require.Equal(t, CASRequired, capErr.Mode)
	require.Equal(t, st.Capabilities().Backend, capErr.Backend)
	for _, part := range []string{"conditionalBatch", "cas-required", st.Capabilities().Backend} {
		require.Contains(t, err.Error(), part)
	}
}

func TestOwnership_CASRequiredOnAConditionalStoreStarts(t *testing.T) {
	_, err := New(Config{Store: memstore.New(memstore.Config{}), Ownership: CASRequired})
	require.NoError(t, err)
}

func TestOwnership_UnknownModeIsRefused(t *testing.T) {
	_, err := New(Config{Store: memstore.New(memstore.Config{}), Ownership: "several-owners"})
	require.ErrorContains(t, err, `checkpoint ownership must be "single-owner" or "cas-required", got "several-owners"`)
}

func TestOwnership_SingleOwnerRunsWorkflowsOnAStoreWithoutConditionalBatch(t *testing.T) {
	b := setupWith(t, nocasstore.New())
	for _, scenario := range []func(*testing.T, *bundle){
		scenarioSequential_RunsEachActionAfterThePreviousSucceeds,
		scenarioDAG_AllOfJoinWaitsForEveryPredecessor,
		scenarioRetry_RetryableFailureRunsAgainAfterBackoff,
		scenarioCompensation_RunsInReverseCompletionOrderThenFails,
		scenarioManual_WaitsWithAFreshTokenAndCompletesIdempotently,
	} {
		scenario(t, b)
	}
}

func TestSignals_IdempotentDeliveryFailsFastWithoutConditionalBatch(t *testing.T) {
	b := setupWith(t, nocasstore.New())
	def := seq("w")
	def.Actions[0].Activity, def.Actions[0].WaitForSignal = "", &definition.SignalWait{SignalName: "go"}
	run := b.submit(def)
	id := "once"
	_, err := b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: run.RunID, SignalName: "go", SignalID: &id, Payload: json.RawMessage(`1`)})
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, CodeCapabilityUnavailable, e.Code)
	require.Equal(t, "conditionalBatch", e.Capability)
	require.Equal(t, runstate.RunBlocked, b.run(run.RunID).Status, "nothing was enqueued")
	_, err = b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: run.RunID, SignalName: "go", Payload: json.RawMessage(`1`)})
	require.NoError(t, err, "a signal without signal_id needs no idempotency record")
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}
