package engine

import (
	"bytes"
	"cmp"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"sync"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/decide"
	"github.com/weft-dev/weft/engine/internal/dispatch"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// PollParams asks for tasks.
type PollParams struct {
	TenantID string
	WorkerID string
	Queue    string
	// Activities and Compensations are the names the worker runs.
	Activities    []string
	Compensations []string
	// Verifiable names the activities the worker can verify (it derives an
	// idempotency key and has a verify function): they are reconcilable.
	Verifiable []string
	MaxTasks   int
	// Wait is how long to wait for a task; 0 answers at once.
	Wait time.Duration
}

// withDefaults answers p with the default queue and at least one task.
func (p PollParams) withDefaults() PollParams {
	p.Queue = cmp.Or(p.Queue, definition.DefaultQueue)
	p.MaxTasks = max(p.MaxTasks, 1)
	return p
}

// TaskKind is what a task asks a worker to do (package record).
type TaskKind = record.TaskKind

// The task kinds.
const (
	TaskActivity     = record.TaskActivity
	TaskVerify       = record.TaskVerify
	TaskCompensation = record.TaskCompensation
)

// Task is a claimed unit of work.
type Task struct {
	Token            string
	Kind             TaskKind
	TaskID           string
	RunID            string
	TenantID         string
	ActionID         string
	Activity         string
	OperationID      string
	Input            json.RawMessage
	RunInput         json.RawMessage
	UpstreamOutputs  map[string]json.RawMessage
	IdempotencyKey   string
	LogicalAttempt   int
	EngineAttempt    int
	Deadline         time.Time
	HeartbeatTimeout time.Duration
	Secrets          []definition.SecretRef
	// ReconciliationKey, for verify tasks: the key the worker reported before.
	ReconciliationKey string
	// TraceParent is the W3C traceparent the worker's span continues: the
	// attempt's, in the run's trace ("": the run is not traced).
	TraceParent string
	// HeartbeatDetails, for activity tasks, are the last heartbeat details
	// of the logical attempt's earlier engine attempts (docs/semantics.md#heartbeat-details).
	HeartbeatDetails json.RawMessage
	// Item and Index, for a task of a fan-out's item, are the list's
	// element the item runs with and its position (docs/semantics.md#for-each);
	// ItemOf is the forEach step ("" for any other task).
	Item   json.RawMessage
	Index  int
	ItemOf string
}

// The worker-facing task protocol: claiming ready tasks for a poll (poll,
// claimReady, claim), handing claimed tasks back when the poll that asked
// for them has gone (giveBack, dispatch.go), and taking a worker's report of
// a task with the eager dispatch of its next ones (report, report.go). The
// Engine's exported task calls (PollTasks, CompleteTask, FailTask,
// ReportVerification) are its entry points.

// PollTasks claims up to MaxTasks ready tasks of the worker's activities,
// waiting up to Wait for one. A claim persists the step RUNNING with its
// started_at (docs/semantics.md#task-persistence) in the same batch that hands the task out. While it
// waits, a decision of this process that makes a task it asks for ready may
// claim the task for it in the decision's own commit and hand it over
// (dispatch.go); polls that began earlier are served first.
func (e *Engine) PollTasks(ctx context.Context, p PollParams) ([]*Task, error) {
	return poll(ctx, e, p)
}

// poll claims ready tasks for a worker: PollTasks.
// The poll is remembered with the tasks it answers (pollers.go).
func poll(ctx context.Context, e *Engine, p PollParams) ([]*Task, error) {
	p = p.withDefaults()
	done := beginPoll(e, p)
	slot := slotFor(ctx, e, p)
	tasks, err := e.dispatch.Poll(ctx, slot, p.Wait, func() ([]*Task, error) { return claimReady(ctx, e, p, slot) })
	done(tasks)
	return tasks, err
}

// slotFor answers the dispatch slot of a poll that begins now.
func slotFor(ctx context.Context, e *Engine, p PollParams) *dispatch.Slot[*Task] {
	return e.dispatch.SlotFor(ctx, dispatch.QueueKey(p.TenantID, p.Queue), p.WorkerID, p.taskNames(), p.MaxTasks)
}

// taskNames answers the kinds and names of task the poll asks for, as
// wantKey names them.
func (p PollParams) taskNames() map[string]bool {
	names := map[string]bool{}
	for _, a := range p.Activities {
		names["a:"+a] = true
	}
	for _, c := range p.Compensations {
		names["c:"+c] = true
	}
	for _, v := range p.Verifiable {
		names[verifyKey(v)] = true
	}
	return names
}

// wantKey names a task's kind and activity as a poll asks for it
// (PollParams.taskNames).
func wantKey(t *record.Task) string {
	switch t.Kind {
	case TaskCompensation:
		return "c:" + t.Activity
	case TaskVerify:
		return verifyKey(t.Activity)
	default:
		return "a:" + t.Activity
	}
}

// verifyKey names the verify tasks of activity, which a poll asks for when it
// can verify the activity (PollParams.Verifiable).
func verifyKey(activity string) string { return "v:" + activity }

// claimReady claims tasks that are ready now, as many as the poll's slot
// has room for: from the queue's lanes in priority order, oldest first
// within each (docs/semantics.md#priority), in fair order among the
// fairness keys of a priority that has any (docs/semantics.md#fairness).
func claimReady(ctx context.Context, e *Engine, p PollParams, slot *dispatch.Slot[*Task]) ([]*Task, error) {
	var out []*Task
	now := clockNow(e)
	lanes, err := readyLanes(ctx, e, p.TenantID, p.Queue)
	if err != nil {
		return nil, err
	}
	for _, lane := range lanes {
		var done bool
		if lane.fair {
			done, err = claimFair(ctx, e, p, slot, lane, now, &out)
		} else {
			done, err = claimLane(ctx, e, p, slot, lane.plain, now, &out)
		}
		if err != nil || done || len(out) >= p.MaxTasks {
			return out, err
		}
	}
	return out, nil
}

// readyLane is one priority of a queue to claim from: its plain lane
// ("" when it holds no entry), and whether it has fair sub-lanes.
type readyLane struct {
	plain    string
	priority int
	fair     bool
}

// readyLanes answers the queue's priorities to claim from, in priority
// order: the queue itself (priority 3, and every entry from before
// priorities) and the other priorities that hold entries, found with one
// bounded read per lane, a priority's fair sub-lanes with one in all
// (docs/semantics.md#priority).
func readyLanes(ctx context.Context, e *Engine, tenant, queue string) ([]readyLane, error) {
	var byPriority [record.LowestPriority + 1]readyLane
	byPriority[record.DefaultPriority].plain = queue
	start, end := record.OtherLanesRange(tenant, queue)
	for range 2 * record.LowestPriority {
		res, err := e.store.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(res.Items) == 0 {
			break
		}
		lane, ok := record.LaneOfKey(res.Items[0].Key)
		if !ok {
			break
		}
		q, prio, _, fair := record.ParseLane(lane)
		if q != queue || prio < 1 || prio > record.LowestPriority {
			break
		}
		if fair {
			byPriority[prio].fair = true
			_, start = record.FairLanesRange(tenant, queue, prio) // past the priority's sub-lanes
			continue
		}
		byPriority[prio].plain = lane
		start = store.PrefixEnd(record.QueuePrefix(tenant, lane))
	}
	lanes := make([]readyLane, 0, 2)
	for prio := 1; prio <= record.LowestPriority; prio++ {
		if l := byPriority[prio]; l.plain != "" || l.fair {
			l.priority = prio
			lanes = append(lanes, l)
		}
	}
	return lanes, nil
}

// claimLane claims the ready tasks of one lane of the poll's queue onto
// out, until the poll has room for no more; done says the poll's room went
// to hand-offs.
func claimLane(ctx context.Context, e *Engine, p PollParams, slot *dispatch.Slot[*Task], lane string, now time.Time, out *[]*Task) (bool, error) {
	hints := e.dispatch.Hints()
	prefix, end := record.ReadyTaskRange(p.TenantID, lane, now)
	start, gen := hints.Start(prefix, prefix)
	if bytes.Compare(start, end) >= 0 {
		// A concurrent poll that read the clock later has already found
		// nothing live before a point past this poll's now.
		return false, nil
	}
	var after []byte
	for len(*out) < p.MaxTasks {
		res, err := e.store.Scan(ctx, &store.ScanParams{Start: start, End: end, After: after, Limit: 64})
		if err != nil {
			return false, err
		}
		if after == nil { // the first page says where the live entries begin
			if len(res.Items) > 0 {
				hints.Raise(prefix, res.Items[0].Key, gen)
			} else {
				hints.Raise(prefix, end, gen)
			}
		}
		ids := make([]string, 0, len(res.Items))
		for _, it := range res.Items {
			if taskID, err := runcodec.DecodeReady(it.Value); err == nil {
				ids = append(ids, taskID)
			}
		}
		for len(ids) > 0 {
			n := e.dispatch.Hold(slot, min(len(ids), maxParallelClaims))
			if n == 0 {
				return true, nil // the rest of the poll's room went to hand-offs
			}
			claimed, err := claimEach(ctx, e, ids[:n], p, slot.Names())
			e.dispatch.Unhold(slot, n-len(claimed))
			*out = append(*out, claimed...)
			if err != nil {
				return false, err // answer passes on what was claimed
			}
			ids = ids[n:]
		}
		if res.Next == nil {
			break
		}
		after = res.Next
	}
	return false, nil
}

// maxParallelClaims bounds the claims one poll makes at once.
const maxParallelClaims = 16

// claimEach claims the tasks of ids concurrently, so that their commits can
// share a store transaction (group commit) instead of queueing one behind
// another, and answers those it claimed in the order of ids.
func claimEach(ctx context.Context, e *Engine, ids []string, p PollParams, names map[string]bool) ([]*Task, error) {
	tasks := make([]*Task, len(ids))
	errs := make([]error, len(ids))
	if len(ids) == 1 {
		tasks[0], errs[0] = claim(ctx, e, ids[0], p, names)
	} else {
		var wg sync.WaitGroup
		for i, id := range ids {
			wg.Go(func() { tasks[i], errs[i] = claim(ctx, e, id, p, names) })
		}
		wg.Wait()
	}
	var out []*Task
	for i, t := range tasks {
		if t != nil && errs[i] == nil { // a claim that failed to commit is no claim
			out = append(out, t)
		}
	}
	return out, errors.Join(errs...)
}

// errSkipTask says a ready task is not claimable now (a paused run, another
// worker's activity); it stays queued.
var errSkipTask = errors.New("task not claimable now")

// claim hands one task to the worker, or answers nil when it cannot.
func claim(ctx context.Context, e *Engine, taskID string, p PollParams, names map[string]bool) (*Task, error) {
	t, version, err := e.records.LoadTask(ctx, taskID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return claimLoaded(ctx, e, t, version, p, names, nil)
}

// claimLoaded hands the task t, read at version, to the worker, or
// answers nil when it cannot; fair, when set, is the fair-queueing state
// its claim charges (fairclaim.go).
func claimLoaded(ctx context.Context, e *Engine, t *record.Task, version uint64, p PollParams, names map[string]bool, fair *fairTake) (*Task, error) {
	taskID := t.TaskID
	if t.State != record.TaskReady || !names[wantKey(t)] {
		return nil, nil
	}
	if !e.dispatch.Claiming.Begin(taskID) {
		return nil, nil // another poll of this process is claiming it
	}
	defer e.dispatch.Claiming.End(taskID)
	if t.Flow != nil {
		return claimFlow(ctx, e, t, version, p, names, fair)
	}
	if fair != nil {
		return claimFairTask(ctx, e, t, version, p, names, fair)
	}
	var err error
	var task *Task
	_, err = mutate(ctx, e, t.RunID, decide.WorkerActor(p.WorkerID), func(ch *change) error {
		ch.require(store.IfVersion(record.TaskKey(taskID), version))
		var cerr error
		task, cerr = claimTask(ch, t.Fresh(), p.WorkerID, names[verifyKey(t.Activity)], nil)
		return cerr
	})
	var cf *store.ConditionFailedError
	if errors.Is(err, errSkipTask) || errors.As(err, &cf) || CodeOf(err) == CodeNotFound {
		return nil, nil
	}
	return task, err
}

// claimTask is the decision of a claim. handedOff, for a hand-off, is the
// ready entry it claims instead of writing (handOffOne).
func claimTask(c *change, t *record.Task, workerID string, verifiable bool, handedOff *readyEntry) (*Task, error) {
	s := c.state
	st := decide.StepOfTask(s, t.ActionID, t.TaskID)
	if s.Status.Terminal() || st == nil {
		c.retireTask(t.TaskID, string(t.ReadyKey()))
		return nil, nil
	}
	if s.Status == runstate.RunPaused {
		return nil, errSkipTask // none newly started while paused (docs/semantics.md#pause-drain)
	}
	t.State, t.Token, t.WorkerID = record.TaskClaimed, claimToken(t.TaskID), workerID
	t.ClaimedAt, t.HeartbeatAt = c.now, c.now
	t.Deadline = c.now.Add(t.Timeout.D())
	c.unready(t)
	disarmStartTimer(c, t)
	armDeadline(c, t)
	if hb := t.HeartbeatTimeout.D(); hb > 0 {
		t.HeartbeatDue = c.now.Add(hb)
		c.setTimer(record.Timer{RunID: t.RunID, Kind: record.TimerHeartbeat, Ref: t.TaskID, Due: t.HeartbeatDue, Token: t.Token})
	}
	if !claimInCheckpoint(c, t, st, handedOff) {
		c.put(record.TaskKey(t.TaskID), t)
	}
	if err := c.rules().Claimed(decide.TaskKind(t.Kind), c.run.Action(t.ActionID), st, workerID, verifiable); err != nil {
		return nil, err
	}
	task := taskFor(c, t, st)
	task.TraceParent = observeClaim(c, t)
	return task, nil
}

// claimToken answers a new claim's token: the task's id, "#" and 16 random
// bytes in lowercase hex (as decide.RandomToken draws them), built in one
// allocation.
func claimToken(taskID string) string {
	var r [16]byte
	_, _ = rand.Read(r[:]) // crypto/rand.Read never fails
	var b strings.Builder
	b.Grow(len(taskID) + 1 + hex.EncodedLen(len(r)))
	b.WriteString(taskID)
	b.WriteByte('#')
	var h [32]byte
	hex.Encode(h[:], r[:])
	b.Write(h[:])
	return b.String()
}

// taskFor builds what the worker receives.
func taskFor(c *change, t *record.Task, st *runstate.StepState) *Task {
	a := c.run.Action(t.ActionID)
	task := &Task{
		Token: t.Token, Kind: t.Kind, TaskID: t.TaskID, RunID: t.RunID, TenantID: t.TenantID,
		ActionID: t.ActionID, Activity: t.Activity, LogicalAttempt: t.LogicalAttempt, EngineAttempt: t.EngineAttempt,
		Deadline: t.Deadline, HeartbeatTimeout: t.HeartbeatTimeout.D(), Secrets: a.Secrets,
		RunInput:       c.run.Input,
		OperationID:    operationID(t.RunID, t.ActionID, t.LogicalAttempt),
		IdempotencyKey: t.RunID + ":" + t.ActionID,
		Input:          a.Input,
	}
	if st.Input != nil { // its ${{ }} expressions' values, recorded when the step's first task was created
		task.Input = st.Input
	}
	if st.IsItem() {
		task.Item, task.Index, task.ItemOf = st.Item, st.Index, st.Parent
		if len(task.Item) == 0 {
			task.Item = json.RawMessage("null")
		}
	}
	if t.Kind == TaskCompensation {
		task.Input = a.Compensation.Input
		if st.CompInput != nil { // its ${{ }} expressions' values, recorded when the hook started
			task.Input = st.CompInput
		}
		task.IdempotencyKey = decide.CompensationKey(t.RunID, t.ActionID)
		task.UpstreamOutputs = map[string]json.RawMessage{t.ActionID: st.Output}
		return task
	}
	task.UpstreamOutputs = c.rules().UpstreamOutputs(a)
	if a.Repeat != nil && st.Iteration > 1 && len(st.Output) > 0 {
		task.UpstreamOutputs[a.ID] = st.Output // the previous iteration's (docs/semantics.md#repeat)
	}
	if t.Kind == TaskActivity {
		task.HeartbeatDetails = st.HeartbeatDetails
	}
	if t.Kind == TaskVerify {
		if rec, ok := c.rules().Recon(st); ok {
			task.ReconciliationKey = rec.Key
		}
	}
	return task
}
