package engine

import (
	"context"
	"encoding/json"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// requireNoWriteOfTasksQueueEntryOrStartTimer fails if batch writes or
// deletes the ready entry or the schedule-to-start timer of taskID.
func requireNoWriteOfTasksQueueEntryOrStartTimer(t *testing.T, batch *store.Batch, taskID string) {
	t.Helper()
	for _, op := range batch.Ops {
		key := string(op.Key)
		require.False(t, strings.HasPrefix(key, string(record.QueuePrefix(tenant, definition.DefaultQueue))) && strings.HasSuffix(key, taskID),
			"the decision writes or deletes the ready entry %s (op %v)", key, op.Kind)
		require.False(t, strings.HasPrefix(key, "tmr:") && strings.Contains(key, ":"+string(record.TimerStart)+":") && strings.HasSuffix(key, taskID),
			"the decision writes or deletes the schedule-to-start timer %s (op %v)", key, op.Kind)
	}
}

// taskWrites answers the writes of taskID's record in batch.
func taskWrites(batch *store.Batch, taskID string) []store.Op {
	var out []store.Op
	for _, op := range batch.Ops {
		if string(op.Key) == string(record.TaskKey(taskID)) {
			out = append(out, op)
		}
	}
	return out
}

// A decision that makes a task ready and hands it to a waiting poll writes
// no task record (its checkpoint keeps the claim), and neither writes nor deletes its ready
// entry or its schedule-to-start timer: both were created and removed within
// the decision, so they never reach the store — not even as a delete.
func TestHandOff_AHandedOffTasksDecisionWritesNoReadyEntryNoStartTimerAndDeletesNeither(t *testing.T) {
	cs := &countingStore{Store: memstore.New(memstore.Config{})}
	b := setupWith(t, cs, func(c *Config) { c.ScheduleToStartTimeout = 5 * time.Minute })
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	polled := b.longPoll(ctx, "w1", 1, "act-a")
	run := b.submit(seq("a", "b"))
	ta := received(t, polled)
	require.Len(t, ta, 1)
	requireNoWriteOfTasksQueueEntryOrStartTimer(t, cs.last, ta[0].TaskID)
	claimedInCheckpoint(t, b, cs.last, ta[0].TaskID)

	polled = b.longPoll(ctx, "w2", 1, "act-b")
	b.complete(ta[0], `{"a":1}`)
	tb := received(t, polled)
	require.Len(t, tb, 1)
	requireNoWriteOfTasksQueueEntryOrStartTimer(t, cs.last, tb[0].TaskID)
	claimedInCheckpoint(t, b, cs.last, tb[0].TaskID)
	require.Zero(t, b.readyEntries())
	timers, err := cs.Scan(b.ctx, &store.ScanParams{Prefix: keyspace.Timer.KeyPrefix()})
	require.NoError(t, err)
	for _, it := range timers.Items {
		require.NotContains(t, string(it.Key), ":"+string(record.TimerStart)+":", "no schedule-to-start timer is left behind")
	}
	b.complete(tb[0], `{"b":2}`)
	require.Equal(t, "COMPLETED", string(b.run(run.RunID).Status))
}

// claimedInCheckpoint requires that batch writes no record of taskID, and
// that the checkpoint it writes keeps taskID's claim in its step: what
// every reader of the task reads (cache.Records.Task) is claimed, with no
// schedule-to-start timer.
func claimedInCheckpoint(t *testing.T, b *bundle, batch *store.Batch, taskID string) {
	t.Helper()
	require.Empty(t, taskWrites(batch, taskID), "a hand-off writes no task record")
	rec, version, err := b.eng.records.Task(b.ctx, taskID)
	require.NoError(t, err)
	require.Zero(t, version, "the claim is its checkpoint's")
	require.Equal(t, record.TaskClaimed, rec.State)
	require.True(t, rec.StartDue.IsZero())
}

// Eager dispatch is a hand-off too: the completion that hands the worker
// its next task writes neither that task's ready entry nor its timer.
func TestEagerDispatch_TheNextTasksDecisionWritesNoReadyEntryNoStartTimerAndDeletesNeither(t *testing.T) {
	cs := &countingStore{Store: memstore.New(memstore.Config{})}
	b := setupWith(t, cs, func(c *Config) { c.ScheduleToStartTimeout = 5 * time.Minute })
	b.submit(seq("a", "b"))
	next := b.completeEager(b.poll("act-a"), "w1", "act-a", "act-b")
	require.Len(t, next, 1)
	requireNoWriteOfTasksQueueEntryOrStartTimer(t, cs.last, next[0].TaskID)
	claimedInCheckpoint(t, b, cs.last, next[0].TaskID)
}

// With no poll waiting, the task's ready entry and timer are written (the
// rule above drops only what its own decision deletes).
func TestReadyEntry_ATaskNoPollTakesIsWrittenWithItsEntryAndStartTimer(t *testing.T) {
	cs := &countingStore{Store: memstore.New(memstore.Config{})}
	b := setupWith(t, cs, func(c *Config) { c.ScheduleToStartTimeout = 5 * time.Minute })
	b.submit(seq("a"))
	var entry, timer int
	var rec record.Task
	for _, op := range cs.last.Ops {
		key := string(op.Key)
		switch {
		case strings.HasPrefix(key, string(record.QueuePrefix(tenant, definition.DefaultQueue))):
			entry++
			require.Equal(t, store.OpPut, op.Kind)
		case strings.HasPrefix(key, "tmr:") && strings.Contains(key, ":"+string(record.TimerStart)+":"):
			timer++
			require.Equal(t, store.OpPut, op.Kind)
		case strings.HasPrefix(key, "task:"):
			require.NoError(t, record.DecodeTask(op.Value, &rec))
		}
	}
	require.Equal(t, 1, entry)
	require.Equal(t, 1, timer)
	require.Equal(t, record.TaskReady, rec.State)
	require.False(t, rec.StartDue.IsZero())
	ta := b.poll("act-a")
	require.NotNil(t, ta)
	require.Zero(t, b.readyEntries())
}

// changeForTests answers a change of one run with no engine.
func changeForTests() *change {
	return &change{run: &record.Run{RunID: "run-1", TenantID: tenant}}
}

// newReadyTask answers a task of run-1 ready in the default queue with a
// schedule-to-start timer due at due.
func newReadyTask(id string, due time.Time) *record.Task {
	return &record.Task{FormatVersion: record.Version, TaskID: id, RunID: "run-1", TenantID: tenant, Queue: definition.DefaultQueue,
		Kind: TaskActivity, State: record.TaskReady, Seq: 7, NotBefore: testStart, StartDue: due}
}

// A ready entry a decision makes and then deletes (by its key, or by its
// task) vanishes with the schedule-to-start timer it armed; a new task's
// record is written once, as last changed; an entry kept is written with
// its timer; and a delete of an entry the decision did not make stays.
func TestRecorder_AReadyEntryMadeAndDeletedInOneDecisionIsNeitherWrittenNorDeleted(t *testing.T) {
	due := testStart.Add(time.Minute)
	c := changeForTests()
	byKey, byTask, kept := newReadyTask("run-1/a/1/activity1", due), newReadyTask("run-1/b/1/activity1", due), newReadyTask("run-1/c/1/activity1", due)
	c.makeReady(byKey, true)
	c.makeReady(byTask, true)
	c.makeReady(kept, true)
	c.del(byKey.ReadyKey())
	c.unready(byTask)
	disarmStartTimer(c, byTask)
	byTask.State = record.TaskClaimed
	c.put(record.TaskKey(byTask.TaskID), byTask)
	other := newReadyTask("run-1/d/1/activity1", due)
	c.unready(other)
	materializeReady( // made ready by an earlier decision
		c)

	var keys []string
	for _, op := range appendLastWrites(nil, c.ops) {
		keys = append(keys, op.Kind.String()+" "+string(op.Key))
	}
	require.ElementsMatch(t, []string{
		"put " + string(record.TaskKey(byTask.TaskID)), // claimed, once
		"delete " + string(other.ReadyKey()),
		"put " + string(record.TaskKey(byKey.TaskID)), // its entry deleted, its record still written
		"put " + string(record.TaskKey(kept.TaskID)),
		"put " + string(kept.ReadyKey()),
		"put " + string(record.TimerKey(due, "run-1", string(record.TimerStart), kept.TaskID)),
	}, keys)
	for _, op := range c.ops {
		if string(op.Key) == string(record.TaskKey(byTask.TaskID)) {
			var rec record.Task
			require.NoError(t, record.DecodeTask(op.Value, &rec))
			require.Equal(t, record.TaskClaimed, rec.State)
			require.True(t, rec.StartDue.IsZero())
		}
		if string(op.Key) == string(kept.ReadyKey()) {
			id, err := runcodec.DecodeReady(op.Value)
			require.NoError(t, err)
			require.Equal(t, kept.TaskID, id)
		}
	}
	require.Len(t, c.readyPuts, 1, "only the entry kept wakes its queue")
}

// A decision rolled back to a savepoint forgets the ready entries it made
// since.
func TestRecorder_ARollbackForgetsTheReadyEntriesMadeSinceItsSavepoint(t *testing.T) {
	c := changeForTests()
	c.state = &runstate.State{}
	c.makeReady(newReadyTask("run-1/a/1/activity1", time.Time{}), true)
	sp := c.savepoint()
	c.makeReady(newReadyTask("run-1/b/1/activity1", time.Time{}), true)
	c.rollback(sp)
	materializeReady(c)
	require.Len(t, c.readyPuts, 1)
	require.Equal(t, "run-1/a/1/activity1", c.readyPuts[0].task.TaskID)
	require.Len(t, c.ops, 2, "a's record and entry; nothing of b")
}

// The step path's decisions — submissions, claims by polls, hand-offs,
// eager dispatch, completions — never delete a key that is not in the
// store: a record made and removed within one decision is never written.
func TestDecisions_OnTheStepPathDeleteOnlyKeysThatExist(t *testing.T) {
	for _, outbox := range []bool{false, true} {
		as := &absentDeletes{Store: memstore.New(memstore.Config{})}
		eng, err := New(Config{Store: as, ScheduleToStartTimeout: 5 * time.Minute, Outbox: outbox})
		require.NoError(t, err)
		ctx, cancel := context.WithCancel(context.Background())
		def := seq("s1", "s2", "s3", "s4")
		def.Actions[1].HeartbeatTimeout = definition.Duration(time.Minute)
		var activities []string
		for _, a := range def.Actions {
			activities = append(activities, a.Activity)
		}
		var workers sync.WaitGroup
		for w := range 3 {
			workers.Go(func() {
				for ctx.Err() == nil {
					tasks, _ := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w", Activities: activities, MaxTasks: 2, Wait: time.Second})
					for _, task := range tasks {
						r := ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w", Output: json.RawMessage(`{}`)}
						if w == 0 { // this worker asks for its next tasks with each completion
							r.Next = &PollParams{TenantID: tenant, WorkerID: "w", Activities: activities, MaxTasks: 1}
						}
						res, err := eng.CompleteTask(ctx, r)
						for err == nil && len(res.Tasks) > 0 {
							next := res.Tasks[0]
							r.Token = next.Token
							res, err = eng.CompleteTask(ctx, r)
						}
					}
				}
			})
		}
		var clients sync.WaitGroup
		for range 4 {
			clients.Go(func() {
				for range 8 {
					res, err := eng.SubmitRun(ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, SubmittedBy: "test"})
					if !assertNoError(t, err) {
						return
					}
					for {
						snap, err := eng.GetRun(ctx, GetRunParams{TenantID: tenant, RunID: res.Run.RunID})
						if err == nil && snap.Status.Terminal() {
							break
						}
						time.Sleep(time.Millisecond)
					}
				}
			})
		}
		clients.Wait()
		cancel()
		workers.Wait()
		require.Empty(t, as.found(), "outbox %v: deletes of keys not in the store", outbox)
	}
}

func assertNoError(t *testing.T, err error) bool {
	t.Helper()
	if err != nil {
		t.Error(err)
		return false
	}
	return true
}

// absentDeletes records, for each batch that commits, the keys it deletes
// that were not in the store before it.
type absentDeletes struct {
	store.Store
	mu     sync.Mutex
	absent []string
}

func (s *absentDeletes) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	var absent []string
	for _, op := range b.Ops {
		if op.Kind != store.OpDelete {
			continue
		}
		if _, err := s.Store.Get(ctx, op.Key); err != nil {
			absent = append(absent, string(op.Key))
		}
	}
	res, err := s.Store.Commit(ctx, b)
	if err == nil && len(absent) > 0 { // a batch that did not commit may have raced a commit that removed its key
		s.mu.Lock()
		s.absent = append(s.absent, absent...)
		s.mu.Unlock()
	}
	return res, err
}

func (s *absentDeletes) found() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.absent
}

// A claim's token is its task's id, "#" and 32 lowercase hex digits, and
// parseToken answers the task from it; no two are alike.
func TestClaimToken_IsTheTaskIDAndA128BitRandomHexSuffix(t *testing.T) {
	form := regexp.MustCompile(`^run-1/a/1/activity1#[0-9a-f]{32}$`)
	seen := map[string]bool{}
	for range 100 {
		tok := claimToken("run-1/a/1/activity1")
		require.Regexp(t, form, tok)
		id, err := parseToken(tok)
		require.NoError(t, err)
		require.Equal(t, "run-1/a/1/activity1", id)
		require.False(t, seen[tok])
		seen[tok] = true
	}
}
