package schedule

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	timesource "github.com/weft-dev/weft/internal/clock"
)

func ptr[T any](v T) *T { return &v }

// update changes a schedule, requiring success.
func (b *bundle) update(p UpdateParams) *View {
	b.t.Helper()
	p.TenantID = tenant
	v, err := b.sch.Update(b.ctx, p)
	require.NoError(b.t, err)
	return v
}

// version2 is the test's definition under another plan version: the
// run-request uniqueness would not find a version 1 run with it.
func version2() *definition.Definition {
	def := waitingDefinition()
	def.PlanVersion = "2"
	return &def
}

// TestScheduleUpdate_ANewSpecFiresFromItsFirstNominalTimeAfterTheUpdate is
// the cursor rule: an hourly schedule fired at 10:00 is changed at 10:25 to
// every ten minutes; 10:10 and 10:20 are neither fired nor counted missed
// (they passed before the change), and 10:30 is the first fire of the new
// spec.
func TestScheduleUpdate_ANewSpecFiresFromItsFirstNominalTimeAfterTheUpdate(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Interval: time.Hour, Overlap: OverlapAllowAll, CatchupWindow: time.Hour})
	b.tickAt(time.Hour)
	b.clock.Advance(25 * time.Minute)
	v := b.update(UpdateParams{ScheduleID: "s", Spec: SpecChange{Cron: ptr("*/10 * * * *")}})
	require.Equal(t, "*/10 * * * *", v.Spec.Cron)
	require.Zero(t, v.Spec.Interval, "a cron replaces the interval")
	require.Equal(t, utc("2026-11-02T10:30:00Z"), v.NextFires[0])
	b.tickAt(5 * time.Minute)
	b.tickAt(10 * time.Minute)
	require.Equal(t, []string{
		"schedule:s:20261102T100000.000Z", "schedule:s:20261102T103000.000Z", "schedule:s:20261102T104000.000Z",
	}, b.requestIDs())
	require.Zero(t, b.get("s").Missed)
}

// TestScheduleUpdate_WhatIsDueUnderTheOldSpecIsDecidedUnderItAndNoNominalTimeFiresTwice:
// no tick has run since 10:00 came due under the hourly spec; the update at
// 10:00:20 fires 10:00 under the old spec first. The new ten-minute spec
// also names 10:00, which stays fired once; its first fire is 10:10.
func TestScheduleUpdate_WhatIsDueUnderTheOldSpecIsDecidedUnderItAndNoNominalTimeFiresTwice(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Interval: time.Hour, Overlap: OverlapAllowAll})
	b.clock.Advance(time.Hour + 20*time.Second)
	v := b.update(UpdateParams{ScheduleID: "s", Spec: SpecChange{Interval: ptr(10 * time.Minute)}})
	require.Equal(t, utc("2026-11-02T10:10:00Z"), v.NextFires[0])
	require.EqualValues(t, 1, v.Fires)
	b.tickAt(0)
	b.tickAt(10 * time.Minute)
	require.Equal(t, []string{"schedule:s:20261102T100000.000Z", "schedule:s:20261102T101000.000Z"}, b.requestIDs())
}

// TestScheduleUpdate_AFireDecidedBeforeADefinitionChangeStartsOnceWithTheDefinitionItWasDecidedWith
// runs on every store: a weftd decided 09:01 and submitted it under plan
// version 1, then died before recording it. The update to version 2 first
// records that fire (finding its run), so the fire is not submitted again
// under version 2 — which the run-request uniqueness would not catch — and
// the next fire starts a version 2 run.
func TestScheduleUpdate_AFireDecidedBeforeADefinitionChangeStartsOnceWithTheDefinitionItWasDecidedWith(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			b := setupOn(t, openStore(t, kind))
			_, dying := b.newProcess(func(r Runs) Runs { return crashingRuns{Runs: r, afterSubmit: true} })
			b.create("s", Spec{Interval: time.Minute, Overlap: OverlapAllowAll})
			b.clock.Advance(time.Minute)
			require.NoError(t, dying.Tick(b.ctx))
			require.Equal(t, 1, b.get("s").PendingFires)
			v := b.update(UpdateParams{ScheduleID: "s", Definition: version2(), Input: []byte(`{"n": 2}`)})
			require.Zero(t, v.PendingFires)
			require.EqualValues(t, 1, v.Fires)
			require.Equal(t, "2", v.Definition.PlanVersion)
			b.tickAt(time.Minute)
			runs := b.runs()
			require.Len(t, runs, 2, "one run per nominal time")
			require.Equal(t, "schedule:s:20261102T090100.000Z", runs[0].RunRequestID)
			require.Equal(t, "1", runs[0].PlanVersion, "decided under version 1")
			require.Equal(t, "schedule:s:20261102T090200.000Z", runs[1].RunRequestID)
			require.Equal(t, "2", runs[1].PlanVersion)
			require.JSONEq(t, `{"n": 2}`, string(runs[1].Input))
		})
	}
}

// TestScheduleUpdate_ADefinitionChangeWaitsForPendingFiresAndAnUpdateChangesNothingWhenRefused:
// while the engine refuses a pending fire's submission for now, an update of
// the definition is unavailable and writes nothing; a spec-only update
// keeps the pending fire.
func TestScheduleUpdate_ADefinitionChangeWaitsForPendingFiresAndAnUpdateChangesNothingWhenRefused(t *testing.T) {
	t.Parallel()
	b := setup(t)
	_, refusing := b.newProcess(func(r Runs) Runs { return overloadedRuns{Runs: r} })
	b.create("s", Spec{Interval: time.Minute, Overlap: OverlapAllowAll})
	b.clock.Advance(time.Minute)
	require.NoError(t, refusing.Tick(b.ctx))
	_, err := refusing.Update(b.ctx, UpdateParams{TenantID: tenant, ScheduleID: "s", Definition: version2()})
	require.Equal(t, engine.CodeUnavailable, engine.CodeOf(err))
	v := b.get("s")
	require.Equal(t, "1", v.Definition.PlanVersion, "a refused update writes nothing")
	require.Equal(t, 1, v.PendingFires)
	v, err = refusing.Update(b.ctx, UpdateParams{TenantID: tenant, ScheduleID: "s", Spec: SpecChange{Overlap: ptr(OverlapSkip)}})
	require.NoError(t, err)
	require.Equal(t, OverlapSkip, v.Spec.Overlap)
	require.Equal(t, 1, v.PendingFires, "a decided fire stays decided")
	b.tickAt(0)
	require.Equal(t, []string{"schedule:s:20261102T090100.000Z"}, b.requestIDs())
}

// overloadedRuns refuses every submission for now.
type overloadedRuns struct{ Runs }

func (overloadedRuns) SubmitRun(context.Context, engine.SubmitParams) (*engine.SubmitResult, error) {
	return nil, &engine.Error{Code: engine.CodeResourceExhausted, Message: "overloaded"}
}

// TestScheduleUpdate_AnInvalidUpdateIsRefusedNamingItsFieldAndWritesNothing
// is the validation table.
func TestScheduleUpdate_AnInvalidUpdateIsRefusedNamingItsFieldAndWritesNothing(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Interval: time.Hour})
	cases := []struct {
		name        string
		p           UpdateParams
		field, rule string
	}{
		{"nothing to change", UpdateParams{}, "spec", "update.changes"},
		{"cron and interval", UpdateParams{Spec: SpecChange{Cron: ptr("@daily"), Interval: ptr(time.Hour)}}, "spec.trigger", "oneof"},
		{"a time zone that is no IANA name", UpdateParams{Spec: SpecChange{TimeZone: ptr("Mars/Olympus")}}, "spec.time_zone", "time_zone.iana"},
		{"a cron that is not five fields", UpdateParams{Spec: SpecChange{Cron: ptr("* * *")}}, "spec.cron", "cron.standard"},
		{"a cron that never fires", UpdateParams{Spec: SpecChange{Cron: ptr("0 0 30 2 *")}}, "spec.cron", "cron.fires"},
		{"an interval under a second", UpdateParams{Spec: SpecChange{Interval: ptr(time.Millisecond)}}, "spec.interval_ms", "uint64.gte"},
		{"an unknown overlap policy", UpdateParams{Spec: SpecChange{Overlap: ptr(OverlapPolicy("SOMETIMES"))}}, "spec.overlap_policy", "enum.defined_only"},
		{"input that is not JSON", UpdateParams{Input: []byte("{")}, "input", "input.json"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			c.p.TenantID, c.p.ScheduleID = tenant, "s"
			_, err := b.sch.Update(b.ctx, c.p)
			requireViolation(t, err, c.field, c.rule)
		})
	}
	_, err := b.sch.Update(b.ctx, UpdateParams{TenantID: tenant, ScheduleID: "s", Definition: &definition.Definition{}})
	require.Equal(t, engine.CodeInvalidArgument, engine.CodeOf(err))
	var e *engine.Error
	require.ErrorAs(t, err, &e)
	require.Contains(t, e.Violations[0].Field, "definition.")
	_, err = b.sch.Update(b.ctx, UpdateParams{TenantID: tenant, ScheduleID: "missing", Spec: SpecChange{Interval: ptr(time.Hour)}})
	require.Equal(t, engine.CodeNotFound, engine.CodeOf(err))
	v := b.get("s")
	require.Equal(t, Spec{Interval: time.Hour, Overlap: OverlapSkip, CatchupWindow: DefaultCatchupWindow}, v.Spec, "nothing was written")
}

// TestScheduleUpdate_UpdatesRacingTicksOfTwoProcessesFireEachNominalTimeOnce
// runs on every store: every minute two schedulers tick while one of them
// switches the schedule between one- and two-minute intervals. Every run
// has its own nominal time, each is one the spec in force named, and the
// fire counter agrees with the runs.
func TestScheduleUpdate_UpdatesRacingTicksOfTwoProcessesFireEachNominalTimeOnce(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			b := setupOn(t, openStore(t, kind))
			_, other := b.newProcess(nil)
			b.create("s", Spec{Interval: time.Minute, Overlap: OverlapAllowAll})
			const minutes = 10
			for i := range minutes {
				b.clock.Advance(time.Minute)
				interval := time.Duration(1+i%2) * time.Minute
				var wg sync.WaitGroup
				for _, s := range []*Scheduler{b.sch, other} {
					wg.Go(func() { require.NoError(t, s.Tick(b.ctx)) })
				}
				wg.Go(func() {
					_, err := other.Update(b.ctx, UpdateParams{TenantID: tenant, ScheduleID: "s", Spec: SpecChange{Interval: &interval}})
					require.NoError(t, err)
				})
				wg.Wait()
			}
			ids := b.requestIDs()
			require.EqualValues(t, len(ids), b.get("s").Fires)
			require.GreaterOrEqual(t, len(ids), minutes/2)
			for _, id := range ids {
				require.Regexp(t, `^schedule:s:20261102T09[0-9]{2}00\.000Z$`, id)
			}
		})
	}
}

// TestScheduleTrigger_RetriesOfOneRequestIDStartOneRun runs on every store
// with two processes: one trigger retried on either process, and one whose
// first attempt died after submitting, start one run whose run_request_id
// names the request id; the fire is counted once; a trigger without a
// request id still starts a run of its own.
func TestScheduleTrigger_RetriesOfOneRequestIDStartOneRun(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			b := setupOn(t, openStore(t, kind))
			_, other := b.newProcess(nil)
			_, dying := b.newProcess(func(r Runs) Runs { return crashingRuns{Runs: r, afterSubmit: true} })
			b.create("s", Spec{Interval: time.Hour})
			trigger := func(s *Scheduler, id string) string {
				t.Helper()
				snap, err := s.Trigger(b.ctx, TriggerParams{TenantID: tenant, ScheduleID: "s", RequestID: id})
				require.NoError(t, err)
				require.Equal(t, engine.TriggerManual, snap.TriggerSource)
				return snap.RunID
			}
			first := trigger(b.sch, "req-1")
			b.clock.Advance(time.Second)
			require.Equal(t, first, trigger(other, "req-1"))
			require.Equal(t, first, trigger(b.sch, "req-1"))

			_, err := dying.Trigger(b.ctx, TriggerParams{TenantID: tenant, ScheduleID: "s", RequestID: "req-2"})
			require.ErrorIs(t, err, errCrashed)
			require.Equal(t, 1, b.get("s").PendingFires)
			second := trigger(other, "req-2")
			require.Equal(t, second, trigger(b.sch, "req-2"))

			var wg sync.WaitGroup
			runIDs := make([]string, 4)
			for i, s := range []*Scheduler{b.sch, other, b.sch, other} {
				wg.Go(func() { runIDs[i] = trigger(s, "req-3") })
			}
			wg.Wait()
			for _, id := range runIDs {
				require.Equal(t, runIDs[0], id, "concurrent retries answer one run")
			}
			trigger(b.sch, "")
			require.Equal(t, []string{"schedule:s:manual:20261102T090001.000Z", "schedule:s:manual:req-1",
				"schedule:s:manual:req-2", "schedule:s:manual:req-3"}, b.requestIDs())
			v := b.get("s")
			require.EqualValues(t, 4, v.Fires, "each trigger counted once")
			require.Zero(t, v.PendingFires)
		})
	}
}

// TestScheduleTrigger_ARetryAfterADefinitionChangeAnswersTheRunItStarted:
// the plan version changed between a trigger and its retry; the retry
// answers the first run instead of starting a version 2 run.
func TestScheduleTrigger_ARetryAfterADefinitionChangeAnswersTheRunItStarted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Interval: time.Hour})
	p := TriggerParams{TenantID: tenant, ScheduleID: "s", RequestID: "deploy-42"}
	first, err := b.sch.Trigger(b.ctx, p)
	require.NoError(t, err)
	b.update(UpdateParams{ScheduleID: "s", Definition: version2()})
	again, err := b.sch.Trigger(b.ctx, p)
	require.NoError(t, err)
	require.Equal(t, first.RunID, again.RunID)
	require.Len(t, b.runs(), 1)
}

// TestScheduleStats_EachDecisionIsCountedByTheOneProcessThatRecordedIt:
// two processes tick one schedule concurrently through fires, skips,
// misses and a refused fire; the sum of their counts equals the record's,
// and both report the record's lag of the latest fire the spec decided —
// not a trigger's or a backfill's.
func TestScheduleStats_EachDecisionIsCountedByTheOneProcessThatRecordedIt(t *testing.T) {
	for _, kind := range storeKinds {
		t.Run(kind, func(t *testing.T) {
			b := setupOn(t, openStore(t, kind))
			_, other := b.newProcess(nil)
			b.create("s", Spec{Interval: time.Minute, Overlap: OverlapSkip, CatchupWindow: 30 * time.Second})
			// The 09:05 fire's run_request_id names a run of another definition: refused for good.
			clash := waitingDefinition()
			clash.Actions[0].WaitForSignal.SignalName = "other"
			_, err := b.eng.SubmitRun(b.ctx, engine.SubmitParams{TenantID: tenant, Definition: clash,
				RunRequestID: "schedule:s:20261102T090500.000Z"})
			require.NoError(t, err)
			tickBoth := func(d time.Duration) {
				b.clock.Advance(d)
				var wg sync.WaitGroup
				for _, s := range []*Scheduler{b.sch, other, b.sch, other} {
					wg.Go(func() { require.NoError(t, s.Tick(b.ctx)) })
				}
				wg.Wait()
			}
			tickBoth(time.Minute + 7*time.Second) // 09:01 fires 7 s late
			tickBoth(time.Minute + 3*time.Second) // 09:02 skipped: 09:01's run waits
			tickBoth(time.Minute)                 // 09:03 skipped
			b.cancel(b.runs()[0].RunID)
			tickBoth(2 * time.Minute)  // 09:04 missed (older than 30 s), 09:05 refused
			tickBoth(50 * time.Second) // 09:06 fires on time
			_, err = b.sch.Trigger(b.ctx, TriggerParams{TenantID: tenant, ScheduleID: "s"})
			require.NoError(t, err)
			_, err = b.sch.Backfill(b.ctx, tenant, "s", start, start.Add(time.Minute))
			require.NoError(t, err)
			tickBoth(0)

			v := b.get("s")
			require.Equal(t, Counts{Fires: 4, Skipped: 2, Missed: 1, Failed: 1}, Counts{v.Fires, v.Skipped, v.Missed, v.Failed})
			var sum Counts
			for _, s := range []*Scheduler{b.sch, other} {
				stats := s.Stats()
				require.Len(t, stats, 1)
				require.Equal(t, "s", stats[0].ScheduleID)
				require.Equal(t, tenant, stats[0].TenantID)
				require.True(t, stats[0].HasLag)
				require.Equal(t, time.Duration(0), stats[0].LastFireLag, "09:06 fired on time; the trigger and the backfill do not count")
				sum = sum.plus(stats[0].Counts)
			}
			require.Equal(t, Counts{Fires: 4, Skipped: 2, Missed: 1, Failed: 1}, sum)
		})
	}
}

// TestScheduleStats_TheLagIsHowLateTheLatestFireWasSubmitted and a
// deleted schedule has none.
func TestScheduleStats_TheLagIsHowLateTheLatestFireWasSubmitted(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.create("s", Spec{Interval: time.Minute, Overlap: OverlapAllowAll})
	require.False(t, b.sch.Stats()[0].HasLag, "no fire yet")
	b.tickAt(time.Minute + 1500*time.Millisecond)
	require.Equal(t, 1500*time.Millisecond, b.sch.Stats()[0].LastFireLag)
	require.Equal(t, 1500*time.Millisecond, b.get("s").LastFireLag)
	require.NoError(t, b.sch.Delete(b.ctx, tenant, "s"))
	st := b.sch.Stats()
	require.False(t, st[0].HasLag, "a deleted schedule has no lag")
	require.Equal(t, uint64(1), st[0].Counts.Fires, "its counters stay")
}

// TestScheduleUpdate_PropertyEveryNominalTimeOfTheSpecInForceFiresOnceAndNoOther
// is the cursor rule as a property: random sequences of clock moves (some
// landing exactly on nominal times), ticks and spec updates (intervals and
// crons). Spec i is in force over (its update, the next update]; the runs
// must be exactly the nominal times each spec names in its span, up to the
// last tick — none lost, none doubled, none of a spec outside its span.
func TestScheduleUpdate_PropertyEveryNominalTimeOfTheSpecInForceFiresOnceAndNoOther(t *testing.T) {
	t.Parallel()
	specs := []SpecChange{
		{Interval: ptr(time.Minute)}, {Interval: ptr(2 * time.Minute)}, {Interval: ptr(90 * time.Second)},
		{Cron: ptr("*/3 * * * *")}, {Cron: ptr("*/5 * * * *")}, {Cron: ptr("* * * * *")},
	}
	for seed := range uint64(25) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 18))
			b := setup(t)
			base := Spec{Interval: time.Minute, Overlap: OverlapAllowAll, CatchupWindow: time.Hour}
			b.create("s", base)
			type span struct {
				from time.Time
				spec Spec
			}
			spans := []span{{start, base}}
			for range 30 {
				d := time.Duration(rng.IntN(4)) * time.Minute
				if rng.IntN(2) == 0 {
					d += time.Duration(rng.IntN(60_000)) * time.Millisecond
				}
				b.clock.Advance(d)
				if rng.IntN(3) == 0 {
					change := specs[rng.IntN(len(specs))]
					v := b.update(UpdateParams{ScheduleID: "s", Spec: change})
					spans = append(spans, span{b.clock.Now().UTC(), v.Spec})
				} else {
					require.NoError(t, b.sch.Tick(b.ctx))
				}
			}
			require.NoError(t, b.sch.Tick(b.ctx))
			end := b.clock.Now().UTC()
			var want []string
			for i, sp := range spans {
				until := end
				if i+1 < len(spans) {
					until = spans[i+1].from
				}
				c, vs := sp.spec.compile()
				require.Empty(t, vs)
				for n := c.next(sp.from); !n.After(until); n = c.next(n) {
					want = append(want, fire{Nominal: n, Source: engine.TriggerSchedule}.runRequestID("s"))
				}
			}
			slices.Sort(want)
			require.Equal(t, want, b.requestIDs())
			require.EqualValues(t, len(want), b.get("s").Fires)
		})
	}
}

// TestScheduleUpdate_AProcessWhoseClockIsBehindNeverMovesTheCursorBack: one
// weftd's clock is 30 s behind another's. Its update of the definition
// (to plan version 2) must not make nominal times the other already fired
// due again — under version 2 they would be second runs.
func TestScheduleUpdate_AProcessWhoseClockIsBehindNeverMovesTheCursorBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	behind := timesource.NewManual(start)
	eng, err := engine.New(engine.Config{Store: b.store, Clock: behind, Ownership: engine.CASRequired})
	require.NoError(t, err)
	slow, err := New(Config{Store: b.store, Runs: eng, Clock: behind})
	require.NoError(t, err)
	b.create("s", Spec{Interval: 10 * time.Second, Overlap: OverlapAllowAll})
	b.tickAt(time.Minute) // fires 09:00:10 .. 09:01:00
	behind.Advance(30 * time.Second)
	_, err = slow.Update(b.ctx, UpdateParams{TenantID: tenant, ScheduleID: "s", Definition: version2()})
	require.NoError(t, err)
	behind.Advance(15 * time.Second)
	require.NoError(t, slow.Tick(b.ctx))
	b.tickAt(10 * time.Second)
	ids := b.requestIDs() // unique, or it fails
	require.Len(t, ids, 7, "09:00:10 .. 09:01:10, each once")
	require.Equal(t, "schedule:s:20261102T090110.000Z", ids[6])
}

// TestSchedule_AResumeOnAProcessWhoseClockIsBehindNeverMovesTheCursorBack:
// paused right after firing 09:01:00, resumed by a weftd whose clock reads
// 09:00:30; 09:00:40 .. 09:01:00 are not fired again.
func TestSchedule_AResumeOnAProcessWhoseClockIsBehindNeverMovesTheCursorBack(t *testing.T) {
	t.Parallel()
	b := setup(t)
	behind := timesource.NewManual(start.Add(30 * time.Second))
	eng, err := engine.New(engine.Config{Store: b.store, Clock: behind, Ownership: engine.CASRequired})
	require.NoError(t, err)
	slow, err := New(Config{Store: b.store, Runs: eng, Clock: behind})
	require.NoError(t, err)
	b.create("s", Spec{Interval: 10 * time.Second, Overlap: OverlapAllowAll})
	b.tickAt(time.Minute)
	_, err = b.sch.Pause(b.ctx, tenant, "s")
	require.NoError(t, err)
	_, err = slow.Resume(b.ctx, tenant, "s")
	require.NoError(t, err)
	behind.Advance(15 * time.Second)
	require.NoError(t, slow.Tick(b.ctx))
	b.tickAt(10 * time.Second)
	require.Len(t, b.requestIDs(), 7, "09:00:10 .. 09:01:10, each once")
	require.EqualValues(t, 7, b.get("s").Fires)
}
