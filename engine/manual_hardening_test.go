package engine

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store/sqlstore/sqltest"
)

// manualScenarios are the manual-completion rules that concern storage, run
// on every store backend.
var manualScenarios = map[string]func(*testing.T, *bundle){
	"Manual_RefusalsAreLoggedAsSignalRejectedWithTheReason": scenarioManual_RefusalsAreLoggedAsSignalRejectedWithTheReason,
	"Manual_ConcurrentDuplicatesAllGetTheOriginalResult":    scenarioManual_ConcurrentDuplicatesAllGetTheOriginalResult,
}

func TestManualScenarios(t *testing.T) {
	for _, backend := range scenarioBackends {
		t.Run(backend.name, func(t *testing.T) {
			for name, scenario := range manualScenarios {
				t.Run(name, func(t *testing.T) {
					scenario(t, setupWith(t, backend.open(t)))
				})
			}
		})
	}
}

// manualRun submits a run whose first step waits for a person, and answers
// the completion that step's open wait takes.
func manualRun(t *testing.T, b *bundle) ManualCompletionParams {
	t.Helper()
	def := seq("approve", "b")
	def.Actions[0].Activity = ""
	def.Actions[0].Completion = definition.CompletionManual
	run := b.submit(def)
	token := b.run(run.RunID).Step("approve").CompletionToken
	require.NotEmpty(t, token)
	return ManualCompletionParams{TenantID: tenant, RunID: run.RunID, ActionID: "approve", CompletionToken: token,
		Outcome: runstate.ManualSucceeded, ActorUserID: "bob", CompletedAt: b.clock.Now()}
}

// rejections answers the SignalRejected events of a run.
func rejections(t *testing.T, b *bundle, runID string) []runstate.Event {
	t.Helper()
	res, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: runID, PageSize: 1000})
	require.NoError(t, err)
	var out []runstate.Event
	for _, ev := range res.Events {
		if ev.Type == runstate.EvSignalRejected {
			out = append(out, ev)
		}
	}
	return out
}

func scenarioManual_RefusalsAreLoggedAsSignalRejectedWithTheReason(t *testing.T, b *bundle) {
	m := manualRun(t, b)
	self := m
	self.ActorUserID = "alice" // the submitter
	_, err := b.eng.CompleteManualAction(b.ctx, self)
	require.Equal(t, CodePermissionDenied, CodeOf(err))
	wrong := m
	wrong.CompletionToken = "not-the-token"
	_, err = b.eng.CompleteManualAction(b.ctx, wrong)
	require.Equal(t, CodeOperationConflict, CodeOf(err))
	_, err = b.eng.CompleteManualAction(b.ctx, m)
	require.NoError(t, err)
	late := m
	late.CompletionToken = "another-token"
	_, err = b.eng.CompleteManualAction(b.ctx, late)
	require.Equal(t, CodeIllegalTransition, CodeOf(err), "the step no longer waits")

	got := rejections(t, b, m.RunID)
	require.Len(t, got, 3, "every refusal is logged, the accepted completion is not")
	for i, want := range []string{"separation of duties", "completion_token does not match", "cannot go SUCCEEDED"} {
		require.Equal(t, runstate.SignalManual, got[i].Data.SignalKind)
		require.Equal(t, "approve", got[i].StepID)
		require.Contains(t, got[i].Data.Reason, want)
	}
	require.Equal(t, "alice", got[0].Data.Actor)
}

func scenarioManual_ConcurrentDuplicatesAllGetTheOriginalResult(t *testing.T, b *bundle) {
	for range 4 {
		m := manualRun(t, b)
		results := completeAtOnce(t, 16, func(int) *Engine { return b.eng }, m)
		requireOneOriginal(t, results)
		require.Empty(t, rejections(t, b, m.RunID), "a retry is answered, never refused")
	}
}

// completeAtOnce sends n identical completions at once, the i-th through
// engineFor(i), and answers their results; every call must succeed.
func completeAtOnce(t *testing.T, n int, engineFor func(int) *Engine, m ManualCompletionParams) []*ManualCompletionResult {
	t.Helper()
	results := make([]*ManualCompletionResult, n)
	errs := make([]error, n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			<-start
			results[i], errs[i] = engineFor(i).CompleteManualAction(t.Context(), m)
		})
	}
	close(start)
	wg.Wait()
	for i, err := range errs {
		require.NoError(t, err, "call %d of %d identical completions", i, n)
	}
	return results
}

// requireOneOriginal checks that exactly one result is the original and all
// agree with it.
func requireOneOriginal(t *testing.T, results []*ManualCompletionResult) {
	t.Helper()
	fresh := 0
	for _, r := range results {
		require.Equal(t, results[0].Result, r.Result)
		if !r.Duplicate {
			fresh++
		}
	}
	require.Equal(t, 1, fresh, "one call completed the step, the rest were answered as duplicates")
}

func TestManual_ConcurrentDuplicatesAcrossTwoEnginesGetTheOriginalResult(t *testing.T) {
	db := sqltest.Require(t)
	schema := db.NewSchema(t)
	b := setupWith(t, db.Open(t, schema), func(c *Config) { c.Ownership = CASRequired; c.Owner = "engine-a" })
	other, err := New(Config{Store: db.Open(t, schema), Ownership: CASRequired, Owner: "engine-b", Clock: b.clock})
	require.NoError(t, err)
	engines := []*Engine{b.eng, other}
	for range 4 {
		m := manualRun(t, b)
		_, err := other.GetRun(b.ctx, GetRunParams{TenantID: tenant, RunID: m.RunID}) // engine b caches the waiting checkpoint
		require.NoError(t, err)
		results := completeAtOnce(t, 16, func(i int) *Engine { return engines[i%2] }, m)
		requireOneOriginal(t, results)
		require.Empty(t, rejections(t, b, m.RunID), "a retry is answered, never refused")
		accepted := 0
		for _, ty := range b.eventTypes(m.RunID) {
			if ty == runstate.EvSignalAccepted {
				accepted++
			}
		}
		require.Equal(t, 1, accepted)
	}
}

func scenarioManual_SeparationOfDutiesIsDecidedOnThePrincipal(t *testing.T, b *bundle) {
	m := manualRun(t, b) // submitted by alice
	forged := m
	forged.Principal, forged.ActorUserID = "alice", "not-alice"
	_, err := b.eng.CompleteManualAction(b.ctx, forged)
	require.Equal(t, CodePermissionDenied, CodeOf(err), "a declared actor does not hide the submitter's principal")
	other := m
	other.Principal, other.ActorUserID = "carol", "alice"
	res, err := b.eng.CompleteManualAction(b.ctx, other)
	require.NoError(t, err, "carol is not the submitter, whatever name she declares")
	require.Equal(t, "carol", res.Result.Principal)
	require.Equal(t, "alice", res.Result.ActorUserID)
}

func scenarioManual_PrincipalNotesAndEvidenceArePersistedWithTheStep(t *testing.T, b *bundle) {
	m := manualRun(t, b)
	m.Principal, m.Notes, m.EvidenceRefs = "carol", "stock checked", []string{"ticket:OPS-7"}
	first, err := b.eng.CompleteManualAction(b.ctx, m)
	require.NoError(t, err)
	want := first.Result
	require.Equal(t, "stock checked", want.Notes)
	b.restart() // nothing from the first engine's memory
	got := b.run(m.RunID).Step("approve").Manual
	require.NotNil(t, got)
	require.Equal(t, want.Principal, got.Principal)
	require.Equal(t, want.Notes, got.Notes)
	require.Equal(t, want.EvidenceRefs, got.EvidenceRefs)
	require.Equal(t, want.ActorUserID, got.ActorUserID)
	again, err := b.eng.CompleteManualAction(b.ctx, m)
	require.NoError(t, err)
	require.True(t, again.Duplicate)
	require.Equal(t, want, again.Result, "a duplicate answers the notes and evidence too")
	res, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: m.RunID, PageSize: 1000})
	require.NoError(t, err)
	for _, ev := range res.Events {
		if ev.Type == runstate.EvSignalAccepted {
			require.Equal(t, "carol", ev.Data.Principal)
			require.Equal(t, "stock checked", ev.Data.Notes)
			require.Equal(t, []string{"ticket:OPS-7"}, ev.Data.EvidenceRefs)
			require.Equal(t, "operator:carol", ev.EmittedBy)
		}
	}
}
