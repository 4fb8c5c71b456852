package engine

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// countingStore counts commits and can fail the next ones with an error, or
// apply them and lose their acknowledgement.
type countingStore struct {
	store.Store
	commits  atomic.Int64
	mu       sync.Mutex
	failNext []error
	lostAcks int          // the next commits apply and answer an unknown outcome
	last     *store.Batch // a copy of the last batch committed
}

func (s *countingStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	s.commits.Add(1)
	s.mu.Lock()
	s.last = copyBatch(b) // a store keeps nothing of a batch (its memory is the decision's)
	var fail error
	if len(s.failNext) > 0 {
		fail, s.failNext = s.failNext[0], s.failNext[1:]
	}
	lose := s.lostAcks > 0 && fail == nil
	if lose {
		s.lostAcks--
	}
	s.mu.Unlock()
	if fail != nil {
		return nil, fail
	}
	res, err := s.Store.Commit(ctx, b)
	if err == nil && lose {
		return nil, &store.OutcomeUnknownError{Cause: errors.New("acknowledgement lost")}
	}
	return res, err
}

// copyBatch answers a deep copy of b.
func copyBatch(b *store.Batch) *store.Batch {
	c := &store.Batch{Conditions: slices.Clone(b.Conditions), Ops: slices.Clone(b.Ops)}
	for i := range c.Conditions {
		c.Conditions[i].Key = bytes.Clone(c.Conditions[i].Key)
	}
	for i := range c.Ops {
		c.Ops[i].Key, c.Ops[i].Value = bytes.Clone(c.Ops[i].Key), bytes.Clone(c.Ops[i].Value)
	}
	return c
}

func (s *countingStore) failCommits(errs ...error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.failNext = append(s.failNext, errs...)
}

// waitingPolls counts the polls of e listed as waiting for a hand-off.
func waitingPolls(e *Engine) int {
	return e.dispatch.WaitingPolls()
}

// longPoll starts a long poll on b's engine and answers once it waits for a
// hand-off (n polls waiting in all).
func (b *bundle) longPoll(ctx context.Context, worker string, n int, activities ...string) <-chan pollResult {
	b.t.Helper()
	return b.longPollFor(ctx, n, PollParams{TenantID: tenant, WorkerID: worker, Activities: activities})
}

// longPollFor starts the long poll p on b's engine and answers once it waits
// for a hand-off (n polls waiting in all).
func (b *bundle) longPollFor(ctx context.Context, n int, p PollParams) <-chan pollResult {
	b.t.Helper()
	out := make(chan pollResult, 1)
	p.Wait = time.Hour
	go func() {
		tasks, err := b.eng.PollTasks(ctx, p)
		out <- pollResult{tasks: tasks, err: err}
	}()
	require.Eventually(b.t, func() bool { return waitingPolls(b.eng) == n }, 10*time.Second, time.Millisecond)
	return out
}

// received answers the tasks a long poll returned.
func received(t *testing.T, polled <-chan pollResult) []*Task {
	t.Helper()
	select {
	case res := <-polled:
		require.NoError(t, res.err)
		return res.tasks
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll did not return")
		return nil
	}
}

// requireCanceledEmpty checks that a long poll whose call was cancelled
// ended with no task: with no error, or with the call's own when the cancel
// reached it inside a store read.
func requireCanceledEmpty(t *testing.T, polled <-chan pollResult) {
	t.Helper()
	select {
	case res := <-polled:
		if res.err != nil {
			require.ErrorIs(t, res.err, context.Canceled)
		}
		require.Empty(t, res.tasks)
	case <-time.After(10 * time.Second):
		t.Fatal("the long poll did not return")
	}
}

// readyEntries counts the entries of the default queue.
func (b *bundle) readyEntries() int {
	b.t.Helper()
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: record.QueuePrefix(tenant, definition.DefaultQueue)})
	require.NoError(b.t, err)
	return len(res.Items)
}

func setupCounting(t *testing.T) (*bundle, *countingStore) {
	t.Helper()
	cs := &countingStore{Store: memstore.New(memstore.Config{})}
	return setupWith(t, cs), cs
}

func TestHandOff_ACompletionHandsTheNextTaskToAWaitingPollInOneCommit(t *testing.T) {
	b, cs := setupCounting(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	polled := b.longPoll(b.ctx, "w2", 1, "act-b")

	before := cs.commits.Load()
	b.complete(ta, `{"a":1}`)
	require.Equal(t, int64(1), cs.commits.Load()-before, "the completion and the next claim share one commit")
	tasks := received(t, polled)
	require.Len(t, tasks, 1)
	tb := tasks[0]
	require.Equal(t, "b", tb.ActionID)
	require.Equal(t, int64(1), cs.commits.Load()-before, "the poll made no commit of its own")
	require.Zero(t, b.readyEntries(), "a handed-off task never gets a ready entry")
	for _, op := range cs.last.Ops {
		require.NotContains(t, string(op.Key), string(record.QueuePrefix(tenant, definition.DefaultQueue)),
			"the completion's commit neither writes nor deletes a ready entry")
	}

	rec, _, err := b.eng.records.Task(b.ctx, tb.TaskID)
	require.NoError(t, err)
	require.Equal(t, record.TaskClaimed, rec.State)
	require.Equal(t, "w2", rec.WorkerID)
	require.Equal(t, tb.Token, rec.Token)
	require.Equal(t, runstate.RunRunning, b.run(run.RunID).Status)
	require.Equal(t, runstate.StepRunning, b.run(run.RunID).Steps[1].Status)

	b.complete(tb, `{"b":2}`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	res, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: tb.Token, WorkerID: "w2", Output: json.RawMessage(`{"b":2}`)})
	require.NoError(t, err)
	require.True(t, res.Duplicate, "a handed-off task's result is recorded exactly once")
}

// normalised answers every record of a store with the identifiers that
// differ between two engines' runs (run ids, event ids, token suffixes,
// idempotency keys hashed from the run id) replaced, so that two runs driven
// the same way compare equal: each record as "key = value", sorted. An
// event group is listed as its events, each under its own run_seq's key:
// how many decisions appended the events is not what is compared.
func normalised(t *testing.T, st store.Store, runID string) []string {
	t.Helper()
	uuids := regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	tokens := regexp.MustCompile(`#[0-9a-f]{32}`)
	hashes := regexp.MustCompile(`[0-9a-f]{64}`)
	norm := func(s string) string {
		s = regexp.MustCompile(regexp.QuoteMeta(runID)).ReplaceAllString(s, "RUN")
		return hashes.ReplaceAllString(tokens.ReplaceAllString(uuids.ReplaceAllString(s, "UUID"), "#TOKEN"), "HASH")
	}
	var out []string
	var after []byte
	for {
		res, err := st.Scan(context.Background(), &store.ScanParams{After: after, Limit: store.MaxScanLimit})
		require.NoError(t, err)
		for _, it := range res.Items {
			if runcodec.IsEventGroup(it.Value) {
				evs, err := runcodec.DecodeEvents(it.Value, runlog.EventKeyRun(it.Key), nil)
				require.NoError(t, err)
				for i := range evs {
					key := runlog.EventKey(runID, evs[i].Seq)
					out = append(out, norm(string(key))+" = "+norm(string(asJSON(t, key, runcodec.AppendEvent(nil, &evs[i])))))
				}
				continue
			}
			out = append(out, norm(string(it.Key))+" = "+norm(string(asJSON(t, it.Key, it.Value))))
		}
		if res.Next == nil {
			sort.Strings(out)
			return out
		}
		after = res.Next
	}
}

// asJSON answers a binary record stored under key as its JSON, where its
// identifiers are text; other values as they are.
func asJSON(t *testing.T, key, v []byte) []byte {
	t.Helper()
	var decoded any
	switch {
	case len(v) > 0 && v[0] == runcodec.FormatEvent:
		var ev runstate.Event
		require.NoError(t, runcodec.DecodeEvent(v, &ev))
		decoded = &ev
	case runcodec.IsEventGroup(v):
		evs, err := runcodec.DecodeEvents(v, runlog.EventKeyRun(key), nil)
		require.NoError(t, err)
		decoded = evs
	case runcodec.IsCheckpoint(v):
		var s runstate.State
		require.NoError(t, runcodec.DecodeState(v, &s))
		decoded = &s
	case runcodec.IsTask(v):
		var task record.Task
		require.NoError(t, record.DecodeTask(v, &task))
		decoded = &task
	case len(v) > 0 && v[0] == runcodec.FormatTimer:
		var tm record.Timer
		require.NoError(t, record.DecodeTimer(v, &tm))
		decoded = &tm
	case len(v) > 0 && v[0] == runcodec.FormatReady:
		id, err := runcodec.DecodeReady(v)
		require.NoError(t, err)
		decoded = id
	default:
		return v
	}
	b, err := json.Marshal(decoded)
	require.NoError(t, err)
	return b
}

// A hand-off's claim is the one a poll makes: the records, timers and
// events are the same, but for the task record the poll writes, which the
// hand-off keeps in its checkpoint's step instead; read back as every
// reader reads a task (cache.Records.Task), it is the poll's record.
func TestHandOff_TheClaimItCommitsIsExactlyWhatAPollsClaimWrites(t *testing.T) {
	def := seq("a", "b")
	def.Actions[1].HeartbeatTimeout = definition.Duration(30 * time.Second)
	drive := func(handOff bool) ([]string, record.Task) {
		b := setup(t)
		b.noProjectionCheck = true
		run := b.submit(def)
		ta := b.poll("act-a")
		var tb *Task
		if handOff {
			polled := b.longPoll(b.ctx, "w2", 1, "act-b")
			b.complete(ta, `{"a":1}`)
			got := received(t, polled)
			require.Len(t, got, 1)
			tb = got[0]
		} else {
			b.complete(ta, `{"a":1}`)
			tasks, err := b.eng.PollTasks(b.ctx, PollParams{TenantID: tenant, WorkerID: "w2", Activities: []string{"act-b"}})
			require.NoError(t, err)
			require.Len(t, tasks, 1)
			tb = tasks[0]
		}
		rec, _, err := b.eng.records.Task(b.ctx, tb.TaskID)
		require.NoError(t, err)
		rec.Token = "#TOKEN" // its random part differs
		rec.Seq = 0          // it orders ready entries only, and the claim has none
		rec.TaskID, rec.RunID = "", ""
		out := normalised(t, b.store, run.RunID)
		out = slices.DeleteFunc(out, func(s string) bool { return strings.HasPrefix(s, "task:RUN/b/") })
		for i, s := range out {
			if strings.HasPrefix(s, "wf:RUN:ckpt = ") {
				out[i] = claimFields.ReplaceAllString(s, "")
			}
		}
		return out, *rec
	}
	polled, polledB := drive(false)
	handedOff, handedOffB := drive(true)
	require.Equal(t, polled, handedOff, "a hand-off writes the records, timers and events a poll's claim writes")
	require.Equal(t, polledB, handedOffB, "a hand-off's claim reads back as the record a poll's claim writes")
}

// claimFields matches the claim fields of a checkpoint's step, as JSON.
var claimFields = regexp.MustCompile(`,"claim_token":"[^"]*","claim_worker":"[^"]*","claimed_at":"[^"]*","claim_deadline":"[^"]*"(,"claim_heartbeat_due":"[^"]*")?`)

func TestHandOff_APollWhoseCallEndedIsNotHandedATask(t *testing.T) {
	b := setup(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	gone, cancel := context.WithCancel(b.ctx)
	cancel()
	// A poll listed as waiting whose call ended before it could leave.
	slot := slotFor(gone, b.eng, PollParams{TenantID: tenant, Queue: definition.DefaultQueue, WorkerID: "gone",
		Activities: []string{"act-b"}, MaxTasks: 1})
	b.eng.dispatch.Open(slot)

	b.complete(ta, `{"a":1}`)
	require.Equal(t, 1, b.readyEntries(), "the task stays ready for a live poll")
	require.Empty(t, b.eng.dispatch.Close(slot))
	tb := b.poll("act-b")
	require.Equal(t, "b", tb.ActionID)
	b.complete(tb, `{"b":2}`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

func TestHandOff_AClaimThatDoesNotCommitPutsThePollBackAndKeepsTheTask(t *testing.T) {
	b, cs := setupCounting(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	polled := b.longPoll(b.ctx, "w2", 1, "act-b")

	cs.failCommits(errors.New("disk on fire"))
	_, err := b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`{"a":1}`)})
	require.Error(t, err)
	require.Equal(t, 1, waitingPolls(b.eng), "the poll waits again")
	select {
	case res := <-polled:
		t.Fatalf("the poll was answered %d tasks by a decision that did not commit", len(res.tasks))
	default:
	}

	cs.failCommits(store.ErrRetryable) // lost and re-made within the same call
	b.complete(ta, `{"a":1}`)
	tasks := received(t, polled)
	require.Len(t, tasks, 1)
	require.Equal(t, "b", tasks[0].ActionID)
	b.complete(tasks[0], `{"b":2}`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
}

// A hand-off whose commit applied but answered an unknown outcome never
// reaches its poll (only a commit known to have applied delivers), so its
// claim is given back: the task is ready again at once — here handed to the
// poll still waiting — instead of claimed by no one until its attempt
// timeout.
func TestHandOff_AClaimWhoseCommitOutcomeIsUnknownIsGivenBack(t *testing.T) {
	b, cs := setupCounting(t)
	run := b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	polled := b.longPoll(b.ctx, "w2", 1, "act-b")

	cs.mu.Lock()
	cs.lostAcks = 1
	cs.mu.Unlock()
	_, _ = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: ta.Token, WorkerID: "w1", Output: json.RawMessage(`{"step":"a"}`)})
	tasks := received(t, polled)
	require.Len(t, tasks, 1)
	require.Equal(t, "b", tasks[0].ActionID)
	b.complete(tasks[0], `{"step":"b"}`)
	require.Equal(t, runstate.RunCompleted, b.run(run.RunID).Status)
	requireEachResultRecordedOnce(t, b.eng, run.RunID)
}

func TestHandOff_ThePollWaitingLongestIsServedFirst(t *testing.T) {
	b := setup(t)
	b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	first := b.longPoll(ctx, "first", 1, "act-b")
	second := b.longPoll(ctx, "second", 2, "act-b")

	b.complete(ta, `{"a":1}`)
	tasks := received(t, first)
	require.Len(t, tasks, 1)
	rec, _, err := b.eng.records.Task(b.ctx, tasks[0].TaskID)
	require.NoError(t, err)
	require.Equal(t, "first", rec.WorkerID)
	require.Equal(t, 1, waitingPolls(b.eng), "the later poll still waits")
	cancel()
	requireCanceledEmpty(t, second)
}

func TestHandOff_APollForOtherTaskNamesDoesNotGetTheTask(t *testing.T) {
	b := setup(t)
	b.submit(seq("a", "b"))
	ta := b.poll("act-a")
	ctx, cancel := context.WithCancel(b.ctx)
	// Another activity, and a compensation of the same name: neither is act-b's task.
	other := b.longPollFor(ctx, 1, PollParams{TenantID: tenant, WorkerID: "other",
		Activities: []string{"act-x"}, Compensations: []string{"act-b"}})

	b.complete(ta, `{"a":1}`)
	require.Equal(t, 1, b.readyEntries(), "the task went to the queue, not to a poll of other names")
	cancel()
	requireCanceledEmpty(t, other)
	require.Equal(t, "b", b.poll("act-b").ActionID)
}

// TestHandOff_RacingPollsAndCompletionsClaimEachTaskOnce runs many runs
// through long polls and concurrent completions (run it with -race): every
// task is handed to one poll once, and every result recorded once.
func TestHandOff_RacingPollsAndCompletionsClaimEachTaskOnce(t *testing.T) {
	b, cs := setupCounting(t)
	b.noProjectionCheck = true
	const runs, workers = 12, 6
	def := seq("s1", "s2", "s3", "s4")
	var runIDs []string
	for range runs {
		runIDs = append(runIDs, b.submit(def).RunID)
	}
	ctx, cancel := context.WithCancel(b.ctx)
	defer cancel()
	var mu sync.Mutex
	seen := map[string]int{}
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for ctx.Err() == nil {
				tasks, err := b.eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: fmt.Sprint("w", w),
					Activities: []string{"act-s1", "act-s2", "act-s3", "act-s4"}, MaxTasks: 2, Wait: time.Second})
				if err != nil {
					continue
				}
				require.LessOrEqual(t, len(tasks), 2)
				for _, task := range tasks {
					mu.Lock()
					seen[task.TaskID]++
					mu.Unlock()
					wg.Go(func() {
						_, _ = b.eng.CompleteTask(b.ctx, ReportParams{TenantID: tenant, Token: task.Token, WorkerID: fmt.Sprint("w", w),
							Output: json.RawMessage(fmt.Sprintf(`{"step":%q}`, task.ActionID))})
					})
				}
			}
		})
	}
	require.Eventually(t, func() bool {
		for _, id := range runIDs {
			if b.run(id).Status != runstate.RunCompleted {
				return false
			}
		}
		return true
	}, 60*time.Second, 10*time.Millisecond)
	cancel()
	wg.Wait()
	var twice []string
	for id, n := range seen {
		if n != 1 {
			twice = append(twice, id)
		}
	}
	sort.Strings(twice)
	require.Empty(t, twice, "tasks handed out more than once")
	require.Len(t, seen, runs*len(def.Actions))
	for _, id := range runIDs {
		requireEachResultRecordedOnce(t, b.eng, id)
	}
	t.Logf("%.2f commits per step", float64(cs.commits.Load())/float64(runs*len(def.Actions)))
}

// driveHandOffCrashRun runs a five-step workflow to the end as
// driveCrashRun does, except that each completion is made while a long poll
// waits, so that it hands the next task over in its own commit; commit
// killAt (0: never) is interrupted.
func driveHandOffCrashRun(t *testing.T, backend crashBackend, killAt int, die bool) (crashOutcome, int) {
	t.Helper()
	return driveCrashRunWith(t, backend, killAt, die, completeWithHandOffs)
}

// completeWithHandOffs completes each task while a long poll waits, and then
// the tasks that poll was handed, until none is.
func completeWithHandOffs(t *testing.T, eng *Engine, tasks []*Task, activities []string) (handedOff int) {
	for len(tasks) > 0 {
		task := tasks[0]
		tasks = tasks[1:]
		next := completeWhileAPollWaits(t, eng, task, activities)
		handedOff += len(next)
		tasks = append(tasks, next...)
	}
	return handedOff
}

// completeWhileAPollWaits completes task while a long poll of activities
// for one task waits on eng, and answers what the poll got: a poll handed a
// task leaves the waiting list and answers it; one that was not is ended
// (were it ended with a task, it would give the task back: dispatch.go).
func completeWhileAPollWaits(t *testing.T, eng *Engine, task *Task, activities []string) []*Task {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	polled := make(chan []*Task, 1)
	go func() {
		got, _ := eng.PollTasks(ctx, PollParams{TenantID: tenant, WorkerID: "w2", Activities: activities, MaxTasks: 1, Wait: time.Hour})
		polled <- got
	}()
	for waitingPolls(eng) == 0 && len(polled) == 0 {
		time.Sleep(100 * time.Microsecond)
	}
	_, _ = eng.CompleteTask(context.Background(), ReportParams{TenantID: tenant, Token: task.Token, WorkerID: "w",
		Output: json.RawMessage(fmt.Sprintf(`{"step":%q}`, task.ActionID))})
	if waitingPolls(eng) > 0 { // a hand-off is delivered before CompleteTask returns
		cancel()
	}
	return <-polled
}

func TestCrash_EveryCommitPointOfAHandedOffRunRecordsEachResultOnce(t *testing.T) {
	for _, backend := range crashBackends() {
		t.Run(backend.name, func(t *testing.T) {
			clean, handedOff := driveHandOffCrashRun(t, backend, 0, false)
			require.Equal(t, crashSteps-1, handedOff, "every completion but the last hands the next task over")
			for _, mode := range []struct {
				name string
				die  bool
			}{{"store fails after commit", false}, {"process killed after commit", true}} {
				t.Run(mode.name, func(t *testing.T) {
					for killAt := 1; killAt <= clean.commits; killAt++ {
						out, _ := driveHandOffCrashRun(t, backend, killAt, mode.die)
						require.True(t, out.fired, "crash point %d was never reached", killAt)
					}
				})
			}
		})
	}
}
