package engine

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// deadlineEntries answers the store's deadline index entries: key → the
// earliest deadline each holds.
func deadlineEntries(t *testing.T, st store.Store) map[string]time.Time {
	t.Helper()
	res, err := st.Scan(t.Context(), &store.ScanParams{Prefix: keyspace.DeadlineIndex.KeyPrefix(), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	out := map[string]time.Time{}
	for _, it := range res.Items {
		earliest, err := record.DecodeDeadline(it.Value)
		require.NoError(t, err)
		out[string(it.Key)] = earliest
	}
	return out
}

// attemptTimers answers how many attempt timers the store holds.
func attemptTimers(t *testing.T, st store.Store) int {
	t.Helper()
	res, err := st.Scan(t.Context(), &store.ScanParams{Prefix: keyspace.Timer.KeyPrefix(), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	n := 0
	for _, it := range res.Items {
		var tm record.Timer
		require.NoError(t, record.DecodeTimer(it.Value, &tm))
		if tm.Kind == record.TimerAttempt {
			n++
		}
	}
	return n
}

// The claims of a run whose deadlines fall in one bucket share one deadline
// index entry and write no attempt timer; their reports delete nothing;
// the run's end deletes the entry and empties the checkpoint's list.
func TestDeadlineIndex_ClaimsInOneBucketShareOneEntryThatTheRunsEndDeletes(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b", "c"))
	for _, id := range []string{"a", "b", "c"} {
		task := b.poll("act-" + id)
		entries := deadlineEntries(t, b.store)
		require.Len(t, entries, 1, "one entry for the run's claims in one bucket")
		want := record.DeadlineKey(record.DeadlineBucket(task.Deadline), run.RunID)
		require.Contains(t, entries, string(want))
		require.Zero(t, attemptTimers(t, b.store), "an indexed claim writes no attempt timer")
		rec, _, err := b.eng.records.Task(b.ctx, task.TaskID)
		require.NoError(t, err)
		require.True(t, rec.DeadlineIndexed)
		b.complete(task, `1`)
		b.clock.Advance(time.Second)
	}
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	require.Empty(t, deadlineEntries(t, b.store), "the run's end deletes its entries")
	s, _, err := b.eng.records.LoadCheckpoint(b.ctx, run.RunID)
	require.NoError(t, err)
	require.Empty(t, s.Deadlines)
}

// An entry fires at its earliest deadline: the claims whose deadlines have
// passed time out, as attempt timers timed them out, and the entry moves to
// the earliest deadline left in its bucket; once none is left, it goes.
func TestDeadlineIndex_AnEntryTimesOutEachClaimAtItsOwnDeadline(t *testing.T) {
	b := setup(t)
	def := definition.Definition{PlanID: "plan", PlanVersion: "1", Actions: []definition.Action{
		{ID: "a", Order: 1, Activity: "act-a", Timeout: definition.Ms(2000)},
		{ID: "b", Order: 2, Activity: "act-b", Timeout: definition.Ms(7000)},
		{ID: "c", Order: 3, Activity: "act-c", DependsOn: []string{"a", "b"}},
	}}
	run := b.submit(def)
	ta, tb := b.poll("act-a"), b.poll("act-b")
	key := string(record.DeadlineKey(record.DeadlineBucket(ta.Deadline), run.RunID))
	require.Equal(t, map[string]time.Time{key: ta.Deadline}, deadlineEntries(t, b.store), "one entry, at the earliest deadline")

	b.clock.Advance(2*time.Second - time.Millisecond)
	b.tick()
	require.Empty(t, b.run(run.RunID).Step("a").Attempts, "before its deadline, a's attempt runs on")

	b.clock.Advance(time.Millisecond)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.AttemptTimedOut, snap.Step("a").Attempts[0].Outcome, "a timed out at its deadline")
	require.Empty(t, snap.Step("b").Attempts, "b's deadline has not passed")
	require.Equal(t, map[string]time.Time{key: tb.Deadline}, deadlineEntries(t, b.store), "the entry moved to b's deadline")

	b.clock.Advance(5 * time.Second)
	b.tick()
	snap = b.run(run.RunID)
	require.Equal(t, runstate.AttemptTimedOut, snap.Step("b").Attempts[0].Outcome, "b timed out at its deadline")
	require.NotContains(t, deadlineEntries(t, b.store), key, "no claim is left in the bucket")
	require.Zero(t, attemptTimers(t, b.store))
}

// A report that lands before the deadline leaves the entry, which then
// finds no claim to time out: it goes without a timeout.
func TestDeadlineIndex_AnEntryWhoseClaimsReportedGoesWithoutATimeout(t *testing.T) {
	b := setup(t)
	def := seq("a", "b")
	def.Actions[0].Timeout = definition.Ms(3000)
	run := b.submit(def)
	b.complete(b.poll("act-a"), `1`)
	require.Len(t, deadlineEntries(t, b.store), 1, "a's entry stays after its report")
	b.clock.Advance(20 * time.Second) // b's claim falls in a later bucket
	tb := b.poll("act-b")
	b.clock.Advance(time.Second)
	b.tick()
	snap := b.run(run.RunID)
	require.Equal(t, runstate.AttemptSucceeded, snap.Step("a").Attempts[0].Outcome)
	require.Len(t, snap.Step("a").Attempts, 1, "no timeout of a reported claim")
	require.Equal(t, map[string]time.Time{string(record.DeadlineKey(record.DeadlineBucket(tb.Deadline), run.RunID)): tb.Deadline},
		deadlineEntries(t, b.store), "a's entry is gone, b's stays")
	b.complete(tb, `2`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	require.Empty(t, deadlineEntries(t, b.store))
}

// A run lists at most maxDeadlineEntries entries: a claim in a bucket of
// its own past them writes its attempt timer, as every claim did before
// the index, and its report deletes it once.
func TestDeadlineIndex_PastEightBucketsAClaimWritesItsAttemptTimer(t *testing.T) {
	b := setup(t)
	ids := []string{"s1", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10"}
	def := seq(ids...)
	for i := range def.Actions {
		def.Actions[i].Timeout = definition.Ms(int64(time.Hour / time.Millisecond))
	}
	run := b.submit(def)
	for i, id := range ids {
		task := b.poll("act-" + id)
		rec, _, err := b.eng.records.Task(b.ctx, task.TaskID)
		require.NoError(t, err)
		if i < maxDeadlineEntries {
			require.True(t, rec.DeadlineIndexed, "claim %d is indexed", i+1)
			require.Zero(t, attemptTimers(t, b.store))
		} else {
			require.False(t, rec.DeadlineIndexed, "claim %d is past the index", i+1)
			require.Equal(t, 1, attemptTimers(t, b.store), "claim %d wrote its attempt timer", i+1)
		}
		b.complete(task, `1`)
		require.Zero(t, attemptTimers(t, b.store), "a report deletes its claim's attempt timer")
		b.clock.Advance(record.DeadlineBucketWidth)
	}
	require.Len(t, deadlineEntries(t, b.store), 0)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	st := b.store.(*onceCheckedStore)
	st.mu.Lock()
	defer st.mu.Unlock()
	require.Empty(t, st.violations)
	require.Equal(t, len(ids)-maxDeadlineEntries, st.onces, "each attempt timer is deleted once")
}
