package engine

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// fullTaskRecord answers a task record with every field set, and fails when
// a field was added that it does not set.
func fullTaskRecord(t *testing.T) record.Task {
	now := time.Date(2026, 1, 2, 3, 4, 5, 123456789, time.UTC)
	rec := record.Task{FormatVersion: record.Version, TaskID: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e/a/1/a1",
		RunID: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", TenantID: "t", ActionID: "a", Kind: TaskVerify, Queue: "q",
		Activity: "charge", LogicalAttempt: 2, EngineAttempt: 3, NotBefore: now, Seq: 9,
		Timeout: definition.Duration(time.Minute), HeartbeatTimeout: definition.Duration(1500 * time.Microsecond),
		State: record.TaskDone, Token: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e/a/1/a1#ab12", WorkerID: "w1",
		ClaimedAt: now.Add(time.Second), HeartbeatAt: now.Add(2 * time.Second), Deadline: now.Add(time.Minute),
		HeartbeatDue: now.Add(3 * time.Second), StartDue: now.Add(4 * time.Second), Result: "completed",
		HeartbeatDetails: json.RawMessage(`{"page":3}`), EagerTokens: []string{"0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e/b/1/a1#cd34"},
		Flow: &runcodec.TaskFlow{ConcurrencyKey: "customer-42", ThrottleKey: "psp", Err: "expression_eval: no such key"}, Priority: 1, FairKey: "tenant-a", FairWeight: 2.5, DeadlineIndexed: true, EagerOf: "z"}
	v := reflect.ValueOf(rec)
	for i := range v.NumField() {
		require.False(t, v.Field(i).IsZero(), "fullTaskRecord does not set %s", v.Type().Field(i).Name)
	}
	return rec
}

func TestTaskRecord_StoredInBinaryKeepsEveryField(t *testing.T) {
	rec := fullTaskRecord(t)
	b := runcodec.AppendTask(nil, rec.Stored())
	require.True(t, runcodec.IsTask(b))
	var got record.Task
	require.NoError(t, record.DecodeTask(b, &got))
	require.Equal(t, rec, got)
	old, err := json.Marshal(&rec) // the JSON an older weftd wrote, which keeps milliseconds
	require.NoError(t, err)
	require.NoError(t, record.DecodeTask(old, &got))
	rec.HeartbeatTimeout = definition.Duration(time.Millisecond)
	require.Equal(t, rec, got)
}

// asOlderWeftdTasks rewrites a run's task records in the JSON an older
// weftd stored them as, and answers how many it rewrote.
func asOlderWeftdTasks(t *testing.T, st store.Store, runID string) int {
	t.Helper()
	res, err := st.Scan(t.Context(), &store.ScanParams{Prefix: record.TaskPrefix(runID), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	b := &store.Batch{}
	for _, it := range res.Items {
		require.True(t, runcodec.IsTask(it.Value), "task records are written in binary")
		var rec record.Task
		require.NoError(t, record.DecodeTask(it.Value, &rec))
		js, err := json.Marshal(&rec)
		require.NoError(t, err)
		b.Ops = append(b.Ops, store.Put(it.Key, js))
	}
	_, err = st.Commit(t.Context(), b)
	require.NoError(t, err)
	return len(b.Ops)
}

func TestPersistedFormat_TaskRecordsAnOlderWeftdStoredAsJSONAreClaimedAndReported(t *testing.T) {
	st := memstore.New(memstore.Config{})
	older := setupWith(t, st)
	run := older.submit(seq("a", "b"))
	require.Equal(t, 1, asOlderWeftdTasks(t, st, run.RunID), "a's ready task")

	b := setupWith(t, st)   // a newer weftd: no cache, only the store
	task := b.poll("act-a") // claimed from the JSON record
	require.Equal(t, 1, asOlderWeftdTasks(t, st, run.RunID), "a's claimed task, rewritten as JSON")

	c := setupWith(t, st)
	c.complete(task, `{"a":1}`) // reported against the JSON claim
	c.complete(c.poll("act-b"), `{"b":2}`)
	require.Equal(t, runstate.RunCompleted, c.run(run.RunID).Status)
	res, err := st.Scan(t.Context(), &store.ScanParams{Prefix: record.TaskPrefix(run.RunID), Limit: store.MaxScanLimit})
	require.NoError(t, err)
	require.Len(t, res.Items, 2)
	s, _, err := c.eng.records.LoadCheckpoint(c.ctx, run.RunID)
	require.NoError(t, err)
	for _, it := range res.Items {
		// A report writes no record: the JSON claim stays as it was, and
		// the checkpoint says the claim ended (claimEnded).
		var rec record.Task
		require.NoError(t, record.DecodeTask(it.Value, &rec))
		require.Equal(t, record.TaskClaimed, rec.State)
		require.Equal(t, "completed", claimEnded(s, &rec), "%s", it.Key)
	}
}

// asOlderWeftdTimersAndReadyEntries rewrites every timer and ready-queue
// entry in the JSON an older weftd stored them as, and answers how many it
// rewrote.
func asOlderWeftdTimersAndReadyEntries(t *testing.T, st store.Store) int {
	t.Helper()
	b := &store.Batch{}
	for _, prefix := range []string{"tmr", "op"} {
		res, err := st.Scan(t.Context(), &store.ScanParams{Prefix: store.KeyPrefix(prefix), Limit: store.MaxScanLimit})
		require.NoError(t, err)
		for _, it := range res.Items {
			var js []byte
			if prefix == "tmr" {
				require.Equal(t, runcodec.FormatTimer, it.Value[0], "timers are written in binary")
				var tm record.Timer
				require.NoError(t, record.DecodeTimer(it.Value, &tm))
				js, err = json.Marshal(&tm)
			} else {
				require.Equal(t, runcodec.FormatReady, it.Value[0], "ready entries are written in binary")
				var id string
				id, err = runcodec.DecodeReady(it.Value)
				require.NoError(t, err)
				js, err = json.Marshal(id)
			}
			require.NoError(t, err)
			b.Ops = append(b.Ops, store.Put(it.Key, js))
		}
	}
	_, err := st.Commit(t.Context(), b)
	require.NoError(t, err)
	return len(b.Ops)
}

// asOlderWeftdClaim makes a claim look as an older weftd stored it, with
// its deadline in an attempt timer instead of its run's deadline index:
// the task record without DeadlineIndexed, the timer, and no index entry.
func asOlderWeftdClaim(t *testing.T, st store.Store, taskID string) {
	t.Helper()
	item, err := st.Get(t.Context(), record.TaskKey(taskID))
	require.NoError(t, err)
	var task record.Task
	require.NoError(t, record.DecodeTask(item.Value, &task))
	require.True(t, task.DeadlineIndexed)
	task.DeadlineIndexed = false
	tm := record.Timer{RunID: task.RunID, Kind: record.TimerAttempt, Ref: task.TaskID, Due: task.Deadline, Token: task.Token}
	b := &store.Batch{Ops: []store.Op{
		store.Put(record.TaskKey(taskID), runcodec.AppendTask(nil, task.Stored())),
		store.Put(record.TimerKey(tm.Due, tm.RunID, string(tm.Kind), tm.Ref), tm.AppendTimer(nil)),
		store.Delete(record.DeadlineKey(record.DeadlineBucket(task.Deadline), task.RunID)),
	}}
	_, err = st.Commit(t.Context(), b)
	require.NoError(t, err)
}

func TestPersistedFormat_TimersAndReadyEntriesAnOlderWeftdStoredAsJSONStillFireAndClaim(t *testing.T) {
	st := memstore.New(memstore.Config{})
	older := setupWith(t, st, func(c *Config) { c.ScheduleToStartTimeout = time.Hour })
	def := seq("a")
	def.Actions[0].Timeout = definition.Ms(5000)
	run := older.submit(def)
	require.Equal(t, 2, asOlderWeftdTimersAndReadyEntries(t, st), "a's ready entry and its schedule-to-start timer")

	b := setupWith(t, st)
	claimed := b.poll("act-a") // claimed through the JSON ready entry; its JSON start timer is deleted by the claim
	asOlderWeftdClaim(t, st, claimed.TaskID)
	require.Equal(t, 1, asOlderWeftdTimersAndReadyEntries(t, st), "the claim's attempt timer")
	b.clock.Advance(5 * time.Second)
	b.tick() // the JSON attempt timer fires
	snap := b.run(run.RunID)
	require.Len(t, snap.Step("a").Attempts, 1)
	require.Equal(t, runstate.AttemptTimedOut, snap.Step("a").Attempts[0].Outcome, "the attempt timed out")
	b.clock.Advance(time.Second)
	b.tick()
	b.complete(b.poll("act-a"), `2`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}
