package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// pollVerifiable claims as a worker that can verify the activity.
func (b *bundle) pollVerifiable(activity string) []*Task {
	b.t.Helper()
	tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "vw", Activities: []string{activity}, Verifiable: []string{activity}, MaxTasks: 5})
	require.NoError(b.t, err)
	return tasks
}

func (b *bundle) recon(runID, activity, actionID string) *reconRecord {
	b.t.Helper()
	item, err := b.store.Get(b.ctx, reconKey(runID, activity, operationID(runID, actionID, 1)))
	if err != nil {
		return nil
	}
	var r reconRecord
	require.NoError(b.t, json.Unmarshal(item.Value, &r))
	return &r
}

// crashAfterSideEffect claims the activity as a verifying worker that then
// dies after its side effect, before it reports; the attempt times out and
// the backoff passes. It answers the run id.
func crashAfterSideEffect(t *testing.T, b *bundle) string {
	t.Helper()
	def := seq("charge")
	def.Actions[0].Timeout = definition.Ms(10_000)
	run := b.submit(def)
	tasks := b.pollVerifiable("act-charge")
	require.Len(t, tasks, 1)
	require.Equal(t, TaskActivity, tasks[0].Kind)
	require.Equal(t, decide.ReconIndeterminate, b.recon(run.RunID, "act-charge", "charge").Status, "dispatched: a side effect may exist")
	b.clock.Advance(10 * time.Second)
	b.tick()
	require.Equal(t, decide.ReconTimedOut, b.recon(run.RunID, "act-charge", "charge").Status)
	b.clock.Advance(time.Second)
	b.tick()
	return run.RunID
}

// restart replaces the engine with a new one over the same store.
func (b *bundle) restart() {
	b.t.Helper()
	eng, err := New(Config{Store: b.store, Clock: b.clock})
	require.NoError(b.t, err)
	b.eng = eng
}

func (b *bundle) verify(state runstate.VerifyState, result string) *Task {
	b.t.Helper()
	b.pollNone("act-charge") // a worker that cannot verify gets nothing: no blind redispatch
	tasks := b.pollVerifiable("act-charge")
	require.Len(b.t, tasks, 1)
	require.Equal(b.t, TaskVerify, tasks[0].Kind)
	var res json.RawMessage
	if result != "" {
		res = json.RawMessage(result)
	}
	_, err := b.eng.ReportVerification(b.ctx, VerifyParams{TenantID: tenant, Token: tasks[0].Token, WorkerID: "vw", State: state, Result: res, Diagnostic: "checked the ledger"})
	require.NoError(b.t, err)
	return tasks[0]
}

func countEvents(b *bundle, runID, typ string) int {
	n := 0
	for _, ty := range b.eventTypes(runID) {
		if ty == typ {
			n++
		}
	}
	return n
}

func TestReconcile_EveryVerifyStateAfterACrashAndRestart(t *testing.T) {
	cases := []verifyCase{
		{runstate.VerifyNotCompleted, "", runstate.StepSucceeded, "", true},
		{runstate.VerifyCompletedWithResult, `{"charge":"ch_1"}`, runstate.StepSucceeded, "", false},
		{runstate.VerifyCompletedResultUnavailable, "", runstate.StepFailed, definition.ErrorReconciliationResultUnavailable, false},
		{runstate.VerifyIndeterminate, "", runstate.StepFailed, definition.ErrorReconciliationIndeterminate, false},
		{runstate.VerifyCompletedWithResult, "", runstate.StepFailed, definition.ErrorReconciliationIndeterminate, false}, // contradiction: fail closed
	}
	for _, tc := range cases {
		t.Run(string(tc.state)+map[bool]string{true: "", false: " without result"}[tc.result != "" || tc.state != runstate.VerifyCompletedWithResult], func(t *testing.T) {
			for _, backend := range scenarioBackends {
				t.Run(backend.name, func(t *testing.T) { verifyStateAfterRestart(t, setupWith(t, backend.open(t)), tc) })
			}
		})
	}
}

// verifyCase is one row of the verify table of docs/semantics.md#reconciliation.
type verifyCase struct {
	state      runstate.VerifyState
	result     string
	wantStatus runstate.StepStatus
	wantClass  definition.ErrorClass
	redispatch bool
}

func verifyStateAfterRestart(t *testing.T, b *bundle, tc verifyCase) {
	runID := crashAfterSideEffect(t, b)
	b.restart()
	b.verify(tc.state, tc.result)
	if tc.redispatch {
		again := b.pollVerifiable("act-charge")
		require.Len(t, again, 1, "not-completed: dispatch the activity")
		require.Equal(t, TaskActivity, again[0].Kind)
		require.Equal(t, 2, again[0].EngineAttempt)
		_, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: again[0].Token, WorkerID: "vw", Output: json.RawMessage(`"ok"`), ReconciliationKey: "charge-key"})
		require.NoError(t, err)
	} else {
		require.Empty(t, b.pollVerifiable("act-charge"), "never redispatched")
	}
	snap := b.run(runID)
	st := snap.Step("charge")
	require.Equal(t, tc.wantStatus, st.Status)
	if tc.wantClass != "" {
		require.Equal(t, tc.wantClass, st.Error.Class)
	}
	if tc.state == runstate.VerifyCompletedWithResult && tc.result != "" {
		require.JSONEq(t, tc.result, string(st.Output), "the verifier's result is the step's")
		require.Equal(t, decide.ReconCompleted, b.recon(runID, "act-charge", "charge").Status)
	}
	require.LessOrEqual(t, countEvents(b, runID, runstate.EvStepCompleted), 1)
	require.Equal(t, 1, countEvents(b, runID, runstate.EvStepVerified))
}

func scenarioReconcile_VerifierUnavailableIsIndeterminate(t *testing.T, b *bundle) {
	runID := crashAfterSideEffect(t, b)
	tasks := b.pollVerifiable("act-charge")
	require.Len(t, tasks, 1)
	_, err := b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: tasks[0].Token, WorkerID: "vw", ErrorClass: definition.ErrorTransport})
	require.NoError(t, err)
	st := b.run(runID).Step("charge")
	require.Equal(t, runstate.StepFailed, st.Status)
	require.Equal(t, definition.ErrorReconciliationIndeterminate, st.Error.Class)
	require.Empty(t, b.pollVerifiable("act-charge"))
}

func scenarioReconcile_SuccessIsRecordedBeforeItIsAcknowledged(t *testing.T, b *bundle) {
	run := b.submit(seq("charge"))
	task := b.pollVerifiable("act-charge")[0]
	_, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "vw", Output: json.RawMessage(`{"id":7}`), ReconciliationKey: "order-7"})
	require.NoError(t, err)
	rec := b.recon(run.RunID, "act-charge", "charge")
	require.Equal(t, decide.ReconCompleted, rec.Status)
	require.JSONEq(t, `{"id":7}`, string(rec.Result))
	require.Equal(t, "order-7", rec.IdempotencyKey)
	require.Equal(t, run.RunID, rec.WorkflowID)
	require.Equal(t, operationID(run.RunID, "charge", 1), rec.OperationID)
}

func scenarioReconcile_FailureBeforeTheSideEffectRetriesWithoutVerify(t *testing.T, b *bundle) {
	run := b.submit(seq("charge"))
	task := b.pollVerifiable("act-charge")[0]
	_, err := b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "vw", ErrorClass: definition.ErrorTransient})
	require.NoError(t, err)
	require.Equal(t, decide.ReconFailed, b.recon(run.RunID, "act-charge", "charge").Status)
	b.clock.Advance(time.Second)
	b.tick()
	again := b.pollVerifiable("act-charge")
	require.Len(t, again, 1)
	require.Equal(t, TaskActivity, again[0].Kind)
}

func scenarioReconcile_FailureAfterAPossibleSideEffectVerifiesFirst(t *testing.T, b *bundle) {
	run := b.submit(seq("charge"))
	task := b.pollVerifiable("act-charge")[0]
	_, err := b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "vw", ErrorClass: definition.ErrorTransport, SideEffectPossible: true})
	require.NoError(t, err)
	require.Equal(t, decide.ReconIndeterminate, b.recon(run.RunID, "act-charge", "charge").Status)
	b.clock.Advance(time.Second)
	b.tick()
	again := b.pollVerifiable("act-charge")
	require.Len(t, again, 1)
	require.Equal(t, TaskVerify, again[0].Kind)
}

func scenarioReconcile_ActivityWithoutAKeyKeepsAtLeastOnceAndWritesNoRecord(t *testing.T, b *bundle) {
	def := seq("charge")
	def.Actions[0].Timeout = definition.Ms(10_000)
	run := b.submit(def)
	b.poll("act-charge") // a worker without verify
	b.clock.Advance(10 * time.Second)
	b.tick()
	b.clock.Advance(time.Second)
	b.tick()
	again := b.poll("act-charge")
	require.Equal(t, TaskActivity, again.Kind, "redispatched at least once, as before Tier-0")
	require.Nil(t, b.recon(run.RunID, "act-charge", "charge"))
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.Recon.KeyPrefix()})
	require.NoError(t, err)
	require.Empty(t, res.Items, "no reconciliation record is ever written for it")
}

func scenarioReconcile_CancellationBeforeCompletionIsRecordedCancelled(t *testing.T, b *bundle) {
	run := b.submit(seq("charge"))
	task := b.pollVerifiable("act-charge")[0]
	_, err := b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	require.Equal(t, decide.ReconCancelled, b.recon(run.RunID, "act-charge", "charge").Status)
	_, err = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "vw", Output: json.RawMessage(`1`)})
	require.Equal(t, CodeTaskClaimLost, CodeOf(err), "no successful result is recorded after the cancellation")
	require.Equal(t, decide.ReconCancelled, b.recon(run.RunID, "act-charge", "charge").Status)
}

// failingGets fails every Get of a key under prefix while failing is set,
// with an error that is not "not found" (a transient read failure).
type failingGets struct {
	store.Store
	prefix  []byte
	failing bool
	// skip lets that many matching reads through before the failing ones.
	skip int
}

var errReadFailed = errors.New("test: the read failed")

func (s *failingGets) Get(ctx context.Context, key []byte) (store.Item, error) {
	if s.failing && bytes.HasPrefix(key, s.prefix) {
		if s.skip > 0 {
			s.skip--
			return s.Store.Get(ctx, key)
		}
		return store.Item{}, errReadFailed
	}
	return s.Store.Get(ctx, key)
}

// A reconciliation record that cannot be read fails the decision: it is
// never taken for "no record", which would write a fresh one over it and
// drop the idempotency key the worker reported.
func TestReconRecord_AReadErrorFailsTheDecisionAndKeepsTheRecord(t *testing.T) {
	st := &failingGets{Store: setupOnceChecked(t), prefix: keyspace.Recon.KeyPrefix()}
	b := setupWith(t, st)
	run := b.submit(seq("charge"))
	task := b.pollVerifiable("act-charge")[0]
	_, err := b.eng.FailTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "vw", ErrorClass: definition.ErrorTransport,
		SideEffectPossible: true, ReconciliationKey: "order-7"})
	require.NoError(t, err)
	b.clock.Advance(time.Second)
	b.tick()
	verify := b.pollVerifiable("act-charge")
	require.Len(t, verify, 1)
	require.Equal(t, "order-7", verify[0].ReconciliationKey)

	st.failing = true
	_, err = b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.ErrorIs(t, err, errReadFailed, "the cancellation reads the record to keep its key; the read failed")
	st.failing = false
	require.Equal(t, "order-7", b.recon(run.RunID, "act-charge", "charge").IdempotencyKey)

	_, err = b.eng.CancelRun(b.ctx, ControlParams{TenantID: tenant, RunID: run.RunID, Actor: "op"})
	require.NoError(t, err)
	rec := b.recon(run.RunID, "act-charge", "charge")
	require.Equal(t, decide.ReconCancelled, rec.Status)
	require.Equal(t, "order-7", rec.IdempotencyKey, "the record keeps the key the worker reported")
}

// A decision sees the reconciliation record it wrote itself, though the
// store has none yet: a second write keeps what the first recorded.
func TestReconRecord_ADecisionSeesTheRecordItWroteEarlier(t *testing.T) {
	b := setup(t)
	def := seq("charge")
	run := &record.Run{RunID: "r-same-decision", TenantID: tenant, Definition: def}
	step := &runstate.StepState{ActionID: "charge", LogicalAttempt: 1, Reconcile: true, Status: runstate.StepRunning}
	ch := newChange(b.eng, b.ctx, run, &runstate.State{RunID: run.RunID, Steps: []*runstate.StepState{step}}, testStart, "test")
	a := &def.Actions[0]
	ch.rules().RecordRecon(a, step, decide.Recon{Status: decide.ReconIndeterminate, Key: "order-7", Diagnostic: "dispatched"})
	ch.rules().RecordRecon(a, step, decide.Recon{Status: decide.ReconCancelled})
	rec, ok := ch.rules().Recon(step)
	require.True(t, ok, "the decision's own write is its record")
	require.Equal(t, decide.ReconCancelled, rec.Status)
	require.Equal(t, "order-7", rec.Key)
	require.Equal(t, "dispatched", rec.Diagnostic)
	key := reconKey(run.RunID, a.Activity, operationID(run.RunID, a.ID, 1))
	var written reconRecord
	for _, op := range ch.ops {
		if string(op.Key) == string(key) {
			require.NoError(t, json.Unmarshal(op.Value, &written))
		}
	}
	require.Equal(t, decide.ReconCancelled, written.Status)
	require.Equal(t, "order-7", written.IdempotencyKey, "the last write keeps the first's key")
	require.Equal(t, "dispatched", written.Diagnostic)
}

// A signal whose acceptance cannot be read back for its decision is not
// taken for a new one: the read's error is the call's answer, and nothing
// is written.
func TestSignal_AReadErrorInItsDecisionIsTheAnswerNotANewSignal(t *testing.T) {
	st := &failingGets{Store: setupOnceChecked(t), prefix: keyspace.SignalPayload.KeyPrefix()}
	b := setupWith(t, st)
	run := b.submit(seq("a"))
	id := "s-1"
	before, err := b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	st.failing = true // the decision's one read of the acceptance fails
	_, err = b.eng.SignalRun(b.ctx, SignalParams{TenantID: tenant, RunID: run.RunID, SignalName: "go", SignalID: &id})
	require.ErrorIs(t, err, errReadFailed)
	st.failing = false
	after, err := b.eng.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: run.RunID})
	require.NoError(t, err)
	require.Equal(t, before.LastEventSeq, after.LastEventSeq, "nothing was appended")
}
