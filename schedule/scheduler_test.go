package schedule

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store/nocasstore"
)

// TestSchedule_EachNominalTimeStartsOneRunWithItsRunRequestIDAndTriggerSource
// runs on every store: a fire submits with run_request_id = schedule id +
// nominal time and trigger_source schedule, and ticking again at the same
// time starts nothing more.
func TestSchedule_EachNominalTimeStartsOneRunWithItsRunRequestIDAndTriggerSource(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			b := setupOn(t, openStore(t, kind))
			b.create("every-minute", Spec{Interval: time.Minute, Overlap: OverlapAllowAll})
			b.tickAt(30 * time.Second)
			require.Empty(t, b.runs(), "nothing is due before the first nominal time")
			b.tickAt(30 * time.Second)
			b.tickAt(0)
			b.tickAt(time.Minute)
			runs := b.runs()
			require.Len(t, runs, 2)
			require.Equal(t, "schedule:every-minute:20261102T090100.000Z", runs[0].RunRequestID)
			require.Equal(t, "schedule:every-minute:20261102T090200.000Z", runs[1].RunRequestID)
			for _, r := range runs {
				require.Equal(t, engine.TriggerSchedule, r.TriggerSource)
				require.Equal(t, "alice", r.SubmittedBy)
				require.Equal(t, runstate.RunBlocked, r.Status, "the fire starts the run")
			}
			v := b.get("every-minute")
			require.EqualValues(t, 2, v.Fires)
			require.Equal(t, runs[1].RunID, v.LastRunID)
			require.Equal(t, utc("2026-11-02T09:02:00Z"), v.LastFire)
			require.Equal(t, utc("2026-11-02T09:03:00Z"), v.NextFires[0])
		})
	}
}

// TestSchedule_OverlapPolicyDecidesFiresWhileThePreviousRunIsNotTerminal is
// the overlap table: three nominal times pass while the first run waits,
// then the first run ends and one more tick happens.
func TestSchedule_OverlapPolicyDecidesFiresWhileThePreviousRunIsNotTerminal(t *testing.T) {
	t.Parallel()
	cases := []struct {
		policy                 OverlapPolicy
		runsWhileBusy, skipped int
		buffered               bool
		runsAfterEnd           int
	}{
		{OverlapSkip, 1, 2, false, 1},
		{OverlapBufferOne, 1, 1, true, 2},
		{OverlapAllowAll, 3, 0, false, 3},
	}
	for _, c := range cases {
		t.Run(string(c.policy), func(t *testing.T) {
			b := setup(t)
			b.create("s", Spec{Interval: time.Minute, Overlap: c.policy})
			b.tickAt(time.Minute)
			b.tickAt(time.Minute)
			b.tickAt(time.Minute)
			runs := b.runs()
			require.Len(t, runs, c.runsWhileBusy)
			v := b.get("s")
			require.EqualValues(t, c.skipped, v.Skipped)
			require.Equal(t, c.buffered, !v.Buffered.IsZero())
			if c.buffered {
				require.Equal(t, utc("2026-11-02T09:03:00Z"), v.Buffered, "the latest overlapping fire is the one kept")
			}
			b.cancel(runs[0].RunID)
			b.tickAt(10 * time.Second)
			runs = b.runs()
			require.Len(t, runs, c.runsAfterEnd)
			if c.buffered {
				require.Equal(t, "schedule:s:20261102T090300.000Z", runs[1].RunRequestID, "the buffered fire keeps its nominal time")
				require.True(t, b.get("s").Buffered.IsZero())
			}
		})
	}
}

// TestSchedule_AfterDowntimeOnlyNominalTimesInsideTheCatchupWindowFire: ten
// minutes pass without a tick; the four nominal times at most three minutes
// old fire, the six older ones are counted missed.
func TestSchedule_AfterDowntimeOnlyNominalTimesInsideTheCatchupWindowFire(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Interval: time.Minute, Overlap: OverlapAllowAll, CatchupWindow: 3 * time.Minute})
	b.tickAt(10 * time.Minute)
	require.Equal(t, []string{
		"schedule:s:20261102T090700.000Z", "schedule:s:20261102T090800.000Z",
		"schedule:s:20261102T090900.000Z", "schedule:s:20261102T091000.000Z",
	}, b.requestIDs())
	require.EqualValues(t, 6, b.get("s").Missed)
}

// TestSchedule_APausedScheduleFiresNothingAndResumesFromTheNextNominalTime:
// nominal times that pass while paused are never fired, not even inside the
// catch-up window.
func TestSchedule_APausedScheduleFiresNothingAndResumesFromTheNextNominalTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Interval: time.Minute, Overlap: OverlapAllowAll, CatchupWindow: time.Hour})
	_, err := b.sch.Pause(b.ctx, tenant, "s")
	require.NoError(t, err)
	b.tickAt(5 * time.Minute)
	require.Empty(t, b.runs())
	b.clock.Advance(30 * time.Second)
	v, err := b.sch.Resume(b.ctx, tenant, "s")
	require.NoError(t, err)
	require.False(t, v.Paused)
	require.Equal(t, utc("2026-11-02T09:06:00Z"), v.NextFires[0])
	b.tickAt(30 * time.Second)
	require.Equal(t, []string{"schedule:s:20261102T090600.000Z"}, b.requestIDs())
}

// TestSchedule_TriggerStartsAManualRunWhilePausedAndOverlapping: a trigger
// ignores pause and overlap and records trigger_source manual.
func TestSchedule_TriggerStartsAManualRunWhilePausedAndOverlapping(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Interval: time.Hour})
	_, err := b.sch.Pause(b.ctx, tenant, "s")
	require.NoError(t, err)
	first, err := b.sch.Trigger(b.ctx, TriggerParams{TenantID: tenant, ScheduleID: "s"})
	require.NoError(t, err)
	b.clock.Advance(time.Second)
	second, err := b.sch.Trigger(b.ctx, TriggerParams{TenantID: tenant, ScheduleID: "s"})
	require.NoError(t, err)
	require.NotEqual(t, first.RunID, second.RunID)
	require.Equal(t, engine.TriggerManual, first.TriggerSource)
	require.Equal(t, "schedule:s:manual:20261102T090000.000Z", first.RunRequestID)
	v := b.get("s")
	require.EqualValues(t, 2, v.Fires)
	require.Zero(t, v.PendingFires)
	require.Equal(t, second.RunID, v.LastRunID)
}

// TestSchedule_BackfillFiresEveryNominalTimeInTheRangeOnce: a backfill of a
// past range fires each nominal time in [start, end) once, and a second
// backfill of the same range finds those runs instead of starting more.
func TestSchedule_BackfillFiresEveryNominalTimeInTheRangeOnce(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Cron: "*/10 * * * *"})
	from, to := utc("2026-11-01T23:50:00Z"), utc("2026-11-02T00:20:00Z")
	times, err := b.sch.Backfill(b.ctx, tenant, "s", from, to)
	require.NoError(t, err)
	require.Equal(t, []time.Time{from, utc("2026-11-02T00:00:00Z"), utc("2026-11-02T00:10:00Z")}, times)
	require.Equal(t, 3, b.get("s").PendingFires)
	b.tickAt(0)
	_, err = b.sch.Backfill(b.ctx, tenant, "s", from, to)
	require.NoError(t, err)
	b.tickAt(0)
	require.Equal(t, []string{
		"schedule:s:20261101T235000.000Z", "schedule:s:20261102T000000.000Z", "schedule:s:20261102T001000.000Z",
	}, b.requestIDs())
	require.Zero(t, b.get("s").PendingFires)
}

// TestSchedule_ABackfillOfMoreThanItsCapIsRefusedNamingEndTime: more than
// MaxBackfill nominal times is invalid, and nothing is decided.
func TestSchedule_ABackfillOfMoreThanItsCapIsRefusedNamingEndTime(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Interval: time.Second})
	_, err := b.sch.Backfill(b.ctx, tenant, "s", start.Add(-time.Hour), start)
	requireViolation(t, err, "end_time", "backfill.max_fires")
	_, err = b.sch.Backfill(b.ctx, tenant, "s", start, start)
	requireViolation(t, err, "end_time", "backfill.range")
	require.Zero(t, b.get("s").PendingFires)
}

// TestSchedule_CreateRefusesATakenIDAndACronThatNeverFires; the API's other
// refusals name the schedule.
func TestSchedule_CreateRefusesATakenIDAndACronThatNeverFires(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Interval: time.Hour})
	_, err := b.sch.Create(b.ctx, CreateParams{TenantID: tenant, ScheduleID: "s", Spec: Spec{Interval: time.Hour}, Definition: waitingDefinition()})
	require.Equal(t, engine.CodeOperationConflict, engine.CodeOf(err))
	_, err = b.sch.Create(b.ctx, CreateParams{TenantID: tenant, ScheduleID: "t", Spec: Spec{Cron: "0 0 30 2 *"}, Definition: waitingDefinition()})
	requireViolation(t, err, "spec.cron", "cron.fires")
	_, err = b.sch.Create(b.ctx, CreateParams{TenantID: tenant, ScheduleID: "u", Spec: Spec{Interval: time.Hour}, Definition: definition.Definition{}})
	require.Equal(t, engine.CodeInvalidArgument, engine.CodeOf(err))
	var e *engine.Error
	require.ErrorAs(t, err, &e)
	require.Contains(t, e.Violations[0].Field, "definition.")
	_, err = b.sch.Get(b.ctx, "tenant-b", "s", 1)
	require.Equal(t, engine.CodeNotFound, engine.CodeOf(err), "another tenant's schedule is not found")
	require.NoError(t, b.sch.Delete(b.ctx, tenant, "s"))
	require.Equal(t, engine.CodeNotFound, engine.CodeOf(b.sch.Delete(b.ctx, tenant, "s")))
}

// TestSchedule_ListPagesThroughOneTenantsSchedulesByID.
func TestSchedule_ListPagesThroughOneTenantsSchedulesByID(t *testing.T) {
	t.Parallel()
	b := setup(t)
	for _, id := range []string{"c", "a", "b"} {
		b.create(id, Spec{Interval: time.Hour})
	}
	_, err := b.sch.Create(b.ctx, CreateParams{TenantID: "tenant-b", ScheduleID: "z", Spec: Spec{Interval: time.Hour}, Definition: waitingDefinition()})
	require.NoError(t, err)
	page, err := b.sch.List(b.ctx, tenant, 2, "")
	require.NoError(t, err)
	require.Equal(t, []string{"a", "b"}, ids(page.Schedules))
	require.Equal(t, "b", page.NextPageToken)
	page, err = b.sch.List(b.ctx, tenant, 2, page.NextPageToken)
	require.NoError(t, err)
	require.Equal(t, []string{"c"}, ids(page.Schedules))
	require.Empty(t, page.NextPageToken)
}

func ids(vs []*View) []string {
	var out []string
	for _, v := range vs {
		out = append(out, v.ScheduleID)
	}
	return out
}

func requireViolation(t *testing.T, err error, field, rule string) {
	t.Helper()
	var e *engine.Error
	require.ErrorAs(t, err, &e)
	require.Equal(t, engine.CodeInvalidArgument, e.Code)
	require.Len(t, e.Violations, 1)
	require.Equal(t, field, e.Violations[0].Field)
	require.Equal(t, rule, e.Violations[0].Rule)
}

// TestSchedule_TwoProcessesTickingAtOnceFireEachNominalTimeOnce runs on every
// store: two engines and two schedulers over one store tick concurrently at
// every step of the clock; every nominal time has exactly one run and the
// fire counter agrees.
func TestSchedule_TwoProcessesTickingAtOnceFireEachNominalTimeOnce(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			b := setupOn(t, openStore(t, kind))
			_, other := b.newProcess(nil)
			b.create("s", Spec{Interval: time.Minute, Overlap: OverlapAllowAll})
			const minutes = 12
			for range minutes {
				b.clock.Advance(time.Minute)
				var wg sync.WaitGroup
				for _, s := range []*Scheduler{b.sch, other, b.sch, other} {
					wg.Go(func() { require.NoError(t, s.Tick(b.ctx)) })
				}
				wg.Wait()
			}
			ids := b.requestIDs()
			require.Len(t, ids, minutes)
			for i, id := range ids {
				require.Equal(t, fmt.Sprintf("schedule:s:20261102T09%02d00.000Z", i+1), id)
			}
			require.EqualValues(t, minutes, b.get("s").Fires)
		})
	}
}

// crashingRuns stands for a weftd that dies around a submission: before it
// (the fire was decided and written, nothing submitted) or after it (the run
// exists, the record was never told). Either way the call fails as a lost
// process's would.
type crashingRuns struct {
	Runs
	afterSubmit bool
}

var errCrashed = errors.New("process died")

func (c crashingRuns) SubmitRun(ctx context.Context, p engine.SubmitParams) (*engine.SubmitResult, error) {
	if c.afterSubmit {
		if _, err := c.Runs.SubmitRun(ctx, p); err != nil {
			return nil, err
		}
	}
	return nil, &engine.Error{Code: engine.CodeUnavailable, Message: "crashed", Err: errCrashed}
}

// TestSchedule_AProcessThatDiesAroundASubmissionNeitherLosesNorDoublesTheFire
// runs on every store: the decided fire stays pending in the record, the
// other process's next tick submits it, and the run it finds or starts is
// the only one.
func TestSchedule_AProcessThatDiesAroundASubmissionNeitherLosesNorDoublesTheFire(t *testing.T) {
	for _, kind := range storeKinds {
		for _, after := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/after_submit=%v", kind, after), func(t *testing.T) {
				b := setupOn(t, openStore(t, kind))
				_, dying := b.newProcess(func(r Runs) Runs { return crashingRuns{Runs: r, afterSubmit: after} })
				b.create("s", Spec{Interval: time.Minute, Overlap: OverlapSkip})
				b.clock.Advance(time.Minute)
				require.NoError(t, dying.Tick(b.ctx))
				require.Equal(t, 1, b.get("s").PendingFires, "the decision outlives the process")
				require.Len(t, b.runs(), map[bool]int{false: 0, true: 1}[after])
				require.NoError(t, b.sch.Tick(b.ctx))
				require.Equal(t, []string{"schedule:s:20261102T090100.000Z"}, b.requestIDs())
				v := b.get("s")
				require.Zero(t, v.PendingFires)
				require.EqualValues(t, 1, v.Fires)
				require.Zero(t, v.Skipped, "the pending fire is not an overlap of itself")
			})
		}
	}
}

// TestSchedule_AFireRefusedForGoodIsCountedFailedAndDropped: a definition
// the engine now refuses (here: the run_request_id names a run of another
// definition) does not block later fires.
func TestSchedule_AFireRefusedForGoodIsCountedFailedAndDropped(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Interval: time.Minute, Overlap: OverlapAllowAll})
	other := waitingDefinition()
	other.Actions[0].WaitForSignal.SignalName = "other"
	_, err := b.eng.SubmitRun(b.ctx, engine.SubmitParams{TenantID: tenant, Definition: other,
		RunRequestID: "schedule:s:20261102T090100.000Z"})
	require.NoError(t, err)
	b.tickAt(2 * time.Minute)
	v := b.get("s")
	require.EqualValues(t, 1, v.Failed)
	require.EqualValues(t, 1, v.Fires)
	require.Contains(t, v.LastError, "different definition")
	require.Zero(t, v.PendingFires)
}

// TestSchedule_NewRefusesAStoreWithoutConditionalBatches.
func TestSchedule_NewRefusesAStoreWithoutConditionalBatches(t *testing.T) {
	t.Parallel()
	_, err := New(Config{Store: nocasstore.New(), Runs: crashingRuns{}})
	require.Equal(t, engine.CodeCapabilityUnavailable, engine.CodeOf(err))
}
