package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"sync"
	"testing"
	"time"
	"unsafe"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// A decision gives its arena back once its commit has settled, and the
// change it answers then holds none of the arena's memory: what a caller
// keeps of a change never turns into a later decision's events or writes.
func TestDecisionArena_TheAnsweredChangeHoldsNoneOfItsArena(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	var during *decisionArena
	b.noProjectionCheck = true // the decision below appends a RunPaused without pausing the run
	ch, err := mutate(b.ctx, b.eng, run.RunID, "alice", func(ch *change) error {
		during = ch.arena
		ch.emit(runstate.EvRunPaused, "", 1, 0, runstate.EventData{Status: string(runstate.RunPaused), Actor: "alice", Reason: "test"})
		require.Len(t, ch.events, 1)
		require.Same(t, &during.events[0], &ch.events[0], "the decision records in its arena")
		return nil
	})
	require.NoError(t, err)
	require.NotNil(t, during)
	require.Nil(t, ch.arena)
	require.Nil(t, ch.events)
	require.Nil(t, ch.ops)
	require.Nil(t, ch.conds)
	require.Nil(t, ch.taskPuts)
	for i := range during.events { // given back poisoned (setupWith): nothing of the decision is left in it
		require.Equal(t, poisonType, during.events[i].Type)
	}
}

// An arena taken again starts empty, however much the decision before
// recorded in it.
func TestDecisionArena_ATakenArenaRecordsFromEmpty(t *testing.T) {
	var c change
	arena := &decisionArena{}
	arena.fillWithPoison()
	useArena(&c, arena)
	require.Empty(t, c.events)
	require.Empty(t, c.ops)
	require.Empty(t, c.conds)
	require.Empty(t, c.taskPuts)
}

// Recycled memory is never visible: with every arena poisoned when it is
// given back, many runs decided at once — hand-offs to long polls, claims
// from the queue, decisions that fail their events' schema check and are
// answered without a commit — record only their own events and writes. No
// event of any run, and no key in the store, is poison, and each run's log
// is whole. Run it with -race: an arena used after it was given back races
// with the decision that took it next.
func TestDecisionArena_RecycledMemoryIsNeverVisible(t *testing.T) {
	const runs, workers = 24, 4
	st := memstore.New(memstore.Config{})
	var rejected sync.Map // runs whose first completion of step b failed its schema check
	b := setupWith(t, st, func(c *Config) {
		inner := c.validateEvent
		c.validateEvent = func(ev *runstate.Event) error {
			if ev.Type == runstate.EvStepCompleted && ev.StepID == "b" {
				if _, again := rejected.LoadOrStore(ev.RunID, true); !again {
					return errRejectedForTest
				}
			}
			return inner(ev)
		}
	})
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	def := seq("a", "b", "c")
	activities := []string{"act-a", "act-b", "act-c"}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				tasks, _ := b.eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: activities, MaxTasks: 4, Wait: 50 * time.Millisecond})
				for _, task := range tasks {
					p := ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: json.RawMessage(`{"n":1}`)}
					if w%2 == 0 { // eager: the completion claims the next task itself
						p.Next = &PollParams{TenantID: tenant, WorkerID: "w", Activities: activities}
					}
					for p.Token != "" && ctx.Err() == nil {
						res, err := b.eng.CompleteTask(ctx, p)
						if err != nil {
							continue // a rejected completion: nothing was recorded, report it again
						}
						if len(res.Tasks) == 0 {
							break
						}
						p.Token = res.Tasks[0].Token
					}
				}
			}
		})
	}
	ids := make([]string, runs)
	var submitters sync.WaitGroup
	for i := range runs {
		submitters.Go(func() {
			res, err := b.eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "alice"})
			if err != nil {
				t.Error(err)
				return
			}
			ids[i] = res.Run.RunID
		})
	}
	submitters.Wait()
	for _, id := range ids {
		for {
			snap, err := b.eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: id})
			require.NoError(t, err)
			if snap.Status.Terminal() {
				require.Equal(t, runstate.RunCompleted, snap.Status)
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	cancel()
	wg.Wait()

	for _, id := range ids {
		res, err := b.eng.ListEvents(b.ctx, ListEventsParams{TenantID: tenant, RunID: id, PageSize: 1000})
		require.NoError(t, err)
		require.NotEmpty(t, res.Events)
		require.Equal(t, runstate.EvRunCompleted, res.Events[len(res.Events)-1].Type, "run %s's log ends with its completion", id)
		for i, ev := range res.Events {
			require.NotEqual(t, poisonType, ev.Type)
			require.Equal(t, id, ev.RunID)
			require.Equal(t, uint64(i+1), ev.Seq, "run %s's log is whole and in order", id)
		}
		_, tried := rejected.Load(id)
		require.True(t, tried, "run %s had a completion rejected", id)
	}
	all, err := st.Scan(b.ctx, &store.ScanParams{Limit: store.MaxScanLimit})
	require.NoError(t, err)
	for _, it := range all.Items {
		require.False(t, bytes.Contains(it.Key, poisonKey), "a poisoned write reached the store")
		require.False(t, bytes.Contains(it.Value, poisonKey), "a poisoned value reached the store")
	}
}

var errRejectedForTest = errorString("rejected for the test")

type errorString string

func (e errorString) Error() string { return string(e) }

// A decision's batch and its checkpoint's value are encoded in its arena,
// and given back with it: the next decision's batch starts in the same
// memory, emptied of every key and value, and memory a rare large decision
// grew is left to the collector.
func TestDecisionArena_TheBatchAndCheckpointAreKeptEmptiedWithinBounds(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a"))
	b.noProjectionCheck = true
	_, err := mutate(b.ctx, b.eng, run.RunID, "alice", func(ch *change) error {
		ch.emit(runstate.EvRunPaused, "", 1, 0, runstate.EventData{Status: string(runstate.RunPaused), Actor: "alice", Reason: "test"})
		batch, err := batchOf(ch, 0)
		require.NoError(t, err)
		require.Same(t, &ch.arena.batch, batch, "the batch is the arena's")
		require.Equal(t, runlog.CheckpointKey(run.RunID), batch.Ops[0].Key)
		require.Equal(t, unsafe.SliceData(ch.arena.checkpoint), unsafe.SliceData(batch.Ops[0].Value), "the checkpoint is encoded in the arena")
		return errRejectedForTest // commit nothing
	})
	require.ErrorIs(t, err, errRejectedForTest)

	var arenas arenas
	d := &decisionArena{}
	d.batch.Ops = append(make([]store.Op, 0, 16), store.Put([]byte("k"), []byte("v")))
	d.batch.Conditions = append(make([]store.Condition, 0, 4), store.IfAbsent([]byte("k")))
	d.checkpoint = append(make([]byte, 0, 512), "state"...)
	arenas.give(d)
	require.Empty(t, d.batch.Ops)
	require.Equal(t, 16, cap(d.batch.Ops))
	require.Zero(t, d.batch.Ops[:1][0], "no key or value of the decision is left")
	require.Zero(t, d.batch.Conditions[:1][0])
	require.Equal(t, 512, cap(d.checkpoint))

	d.batch.Ops = make([]store.Op, 1, keptBatchOps+1)
	d.checkpoint = make([]byte, 1, keptCheckpointBytes+1)
	arenas.give(d)
	require.Nil(t, d.batch.Ops)
	require.Nil(t, d.checkpoint)
}
