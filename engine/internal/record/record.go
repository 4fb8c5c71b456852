package record

import (
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Version is the format version of the records this package holds.
const Version = 1

// RunVersion is the format version of the run records this build writes:
// 2, a record that refers to its definition by its plan SHA-256 (the plan
// record, PlanKey); a record of version 1 holds its definition itself,
// and still loads so.
const RunVersion = 2

// Run is a run's immutable record, written once at submission.
type Run struct {
	FormatVersion int    `json:"version"`
	RunID         string `json:"run_id"`
	TenantID      string `json:"tenant_id"`
	ProjectID     string `json:"project_id"`
	EnvironmentID string `json:"environment_id"`
	RunRequestID  string `json:"run_request_id,omitempty"`
	SubmittedBy   string `json:"submitted_by,omitempty"`
	// TriggerSource is what started the run: api (also when empty), manual
	// or schedule.
	TriggerSource string `json:"trigger_source,omitempty"`
	// Definition is the run's definition, defaults applied. The record
	// stored holds it only when written by an older weftd; else it is the
	// plan record's of the run's tenant and PlanSHA256 (DecodeRun).
	Definition definition.Definition `json:"definition"`
	Input      json.RawMessage       `json:"input,omitempty"`
	PlanSHA256 string                `json:"plan_sha256"`
	CreatedAt  time.Time             `json:"created_at"`
	// TraceParent is the W3C traceparent of the run's trace, kept from its
	// submission so that every later span of the run joins it, across
	// processes and restarts (docs/observability.md). Empty: not traced.
	TraceParent string `json:"traceparent,omitempty"`
	// Parent, on a child run, is the run and step that started it
	// (docs/semantics.md#sub-workflows).
	Parent *Parent `json:"parent,omitempty"`
	// Priority is the submission's priority for the run's tasks, 1–5; zero:
	// the definition's (docs/semantics.md#priority).
	Priority int `json:"priority,omitempty"`
	// ConcurrencyKey is the value of the definition's concurrency key,
	// evaluated at submission (docs/semantics.md#run-concurrency); empty:
	// the definition has no concurrency.
	ConcurrencyKey string `json:"concurrency_key,omitempty"`
}

// Parent is where a child run was started: the parent run, its step and
// the step's logical attempt, and the child's depth (1: a child of a run
// that has no parent).
type Parent struct {
	RunID   string `json:"run_id"`
	Step    string `json:"step"`
	Logical int    `json:"logical"`
	Depth   int    `json:"depth"`
}

// Depth answers how deep the run is nested in sub-workflows (0: it has no parent).
func (r *Run) Depth() int {
	if r.Parent == nil {
		return 0
	}
	return r.Parent.Depth
}

// storedRun is Run as stored: Run's fields but its definition, in Run's
// order, with Run's names (a test holds the two together). The definition
// is the plan record's (PlanKey), stored once for every run of the plan.
type storedRun struct {
	FormatVersion int             `json:"version"`
	RunID         string          `json:"run_id"`
	TenantID      string          `json:"tenant_id"`
	ProjectID     string          `json:"project_id"`
	EnvironmentID string          `json:"environment_id"`
	RunRequestID  string          `json:"run_request_id,omitempty"`
	SubmittedBy   string          `json:"submitted_by,omitempty"`
	TriggerSource string          `json:"trigger_source,omitempty"`
	Input         json.RawMessage `json:"input,omitempty"`
	PlanSHA256    string          `json:"plan_sha256"`
	CreatedAt     time.Time       `json:"created_at"`
	TraceParent   string          `json:"traceparent,omitempty"`
	Parent        *Parent         `json:"parent,omitempty"`
	Priority      int             `json:"priority,omitempty"`
	// ConcurrencyKey is Run.ConcurrencyKey.
	ConcurrencyKey string `json:"concurrency_key,omitempty"`
}

// EncodeRun answers the run's stored record: the JSON of r without its
// definition, which its plan record holds (EncodePlan). A record of plain
// values is written directly (appendRun), byte for byte as json.Marshal
// would.
func EncodeRun(r *Run) ([]byte, error) {
	if b, ok := appendRun(r); ok {
		return b, nil
	}
	return json.Marshal(storedRun{FormatVersion: r.FormatVersion, RunID: r.RunID, TenantID: r.TenantID,
		ProjectID: r.ProjectID, EnvironmentID: r.EnvironmentID, RunRequestID: r.RunRequestID,
		SubmittedBy: r.SubmittedBy, TriggerSource: r.TriggerSource, Input: r.Input,
		PlanSHA256: r.PlanSHA256, CreatedAt: r.CreatedAt, TraceParent: r.TraceParent, Parent: r.Parent, Priority: r.Priority,
		ConcurrencyKey: r.ConcurrencyKey})
}

// decodedRun is a stored run record as read: Run, with its definition
// apart, so that a record holding none is told from one holding an empty
// one.
type decodedRun struct {
	*Run
	Definition *definition.Definition `json:"definition"`
}

// DecodeRun decodes the stored run record of runID into r, and answers
// whether r's definition is its plan record's, for the caller to resolve
// (PlanKey(r.TenantID, r.PlanSHA256), DecodePlan): a record an older weftd
// wrote holds its definition, and is answered whole. A format newer than
// this build knows is refused, never guessed.
func DecodeRun(runID string, value []byte, r *Run) (refersToPlan bool, err error) {
	d := decodedRun{Run: r}
	if err := json.Unmarshal(value, &d); err != nil {
		return false, fmt.Errorf("run record %s: %w", runID, err)
	}
	if r.FormatVersion > RunVersion {
		return false, fmt.Errorf("run record %s has format version %d; this weftd reads up to %d", runID, r.FormatVersion, RunVersion)
	}
	if d.Definition != nil {
		r.Definition = *d.Definition
		return false, nil
	}
	if r.PlanSHA256 == "" {
		return false, fmt.Errorf("run record %s holds neither a definition nor a plan SHA-256", runID)
	}
	return true, nil
}

// EffectivePriority answers the priority of the run's tasks: its
// submission's, else its definition's, else the default, 3.
func (r *Run) EffectivePriority() int {
	switch {
	case r.Priority != 0:
		return r.Priority
	case r.Definition.Priority != 0:
		return r.Definition.Priority
	}
	return DefaultPriority
}

// DefaultPriority is a run's priority when neither its submission nor its
// definition sets one (flowcontrol.DefaultPriority).
const DefaultPriority = 3

// LowestPriority is the last priority handed out (flowcontrol.LowestPriority).
const LowestPriority = 5

// Action answers the definition's action with id, or nil.
func (r *Run) Action(id string) *definition.Action {
	return r.Definition.Action(id)
}

// TaskKind is what a task asks a worker to do.
type TaskKind string

// The task kinds.
const (
	TaskActivity     TaskKind = "activity"
	TaskVerify       TaskKind = "verify"
	TaskCompensation TaskKind = "compensation"
)

// TaskState is where a task is in its life.
type TaskState string

// The task states.
const (
	TaskReady   TaskState = "ready"
	TaskClaimed TaskState = "claimed"
	TaskDone    TaskState = "done"
	TaskLost    TaskState = "lost"
)

// Task is a task's durable state, at task:{id}, stored in binary
// (runcodec.Task, docs/persisted-format.md#binary-records).
type Task struct {
	FormatVersion  int       `json:"version"`
	TaskID         string    `json:"task_id"`
	RunID          string    `json:"run_id"`
	TenantID       string    `json:"tenant_id"`
	ActionID       string    `json:"action_id"`
	Kind           TaskKind  `json:"kind"`
	Queue          string    `json:"queue"`
	Activity       string    `json:"activity"`
	LogicalAttempt int       `json:"logical_attempt"`
	EngineAttempt  int       `json:"engine_attempt"`
	NotBefore      time.Time `json:"not_before"`
	// Seq orders tasks dispatched at one instant: the run's event sequence then.
	Seq              uint64              `json:"seq"`
	Timeout          definition.Duration `json:"timeout_ms"`
	HeartbeatTimeout definition.Duration `json:"heartbeat_timeout_ms,omitempty"`
	State            TaskState           `json:"state"`
	Token            string              `json:"token,omitempty"`
	WorkerID         string              `json:"worker_id,omitempty"`
	ClaimedAt        time.Time           `json:"claimed_at,omitzero"`
	HeartbeatAt      time.Time           `json:"heartbeat_at,omitzero"`
	Deadline         time.Time           `json:"deadline,omitzero"`
	// HeartbeatDue is when the pending heartbeat timer fires.
	HeartbeatDue time.Time `json:"heartbeat_due,omitzero"`
	// StartDue is when the schedule-to-start timer of a ready task fires
	// (zero: it has none), so that its claim can remove it.
	StartDue time.Time `json:"start_due,omitzero"`
	// Result is how a done task ended ("completed" or "failed"), so that a
	// duplicate report with the same token is recognised.
	Result string `json:"result,omitempty"`
	// HeartbeatDetails are the details of the claim's last heartbeat that
	// carried any (docs/semantics.md#heartbeat-details).
	HeartbeatDetails json.RawMessage `json:"heartbeat_details,omitempty"`
	// EagerTokens, on a task completed with eager dispatch whose
	// completion wrote its record, are the claim tokens of the next tasks
	// its completion claimed for the worker, so that a retried completion
	// can give them back (docs/semantics.md#give-back); a completion that
	// writes no record keeps them in its step's checkpoint state
	// (runstate.StepState.EagerTokens).
	EagerTokens []string `json:"eager_tokens,omitempty"`
	// Flow is the task's flow control: what its step's keys answered when
	// it was created (docs/semantics.md#step-concurrency); nil: none.
	Flow *runcodec.TaskFlow `json:"flow,omitempty"`
	// Priority is its run's priority, 1–5 (zero: 3); it places the task's
	// ready entry in its queue's lane (Lane, docs/semantics.md#priority).
	Priority int `json:"priority,omitempty"`
	// FairKey is the task's fairness key ("": the implicit key), which
	// places its ready entry in its lane's fair sub-lane (FairLane), and
	// FairWeight the key's weight then (zero: 1) (docs/semantics.md#fairness).
	FairKey    string  `json:"fair_key,omitempty"`
	FairWeight float64 `json:"fair_weight,omitempty"`
	// DeadlineIndexed, on a claimed task, says its Deadline is indexed by
	// its run's deadline index entry (DeadlineKey, runstate.State.Deadlines)
	// and no attempt timer was written for it; false: the claim wrote its
	// attempt timer (TimerAttempt), as every claim did before the index.
	DeadlineIndexed bool `json:"deadline_indexed,omitempty"`
	// EagerOf, on a task eager dispatch claimed, is the step whose
	// completion claimed it: that step's EagerTokens hold its token until
	// it is reported (runstate.StepState.EagerTokens).
	EagerOf string `json:"eager_of,omitempty"`
}

// Stored answers the record as runcodec stores it.
func (t *Task) Stored() *runcodec.Task {
	return &runcodec.Task{FormatVersion: t.FormatVersion, TaskID: t.TaskID, RunID: t.RunID, TenantID: t.TenantID,
		ActionID: t.ActionID, Kind: string(t.Kind), Queue: t.Queue, Activity: t.Activity,
		LogicalAttempt: t.LogicalAttempt, EngineAttempt: t.EngineAttempt, NotBefore: t.NotBefore, Seq: t.Seq,
		Timeout: t.Timeout, HeartbeatTimeout: t.HeartbeatTimeout, State: string(t.State), Token: t.Token,
		WorkerID: t.WorkerID, ClaimedAt: t.ClaimedAt, HeartbeatAt: t.HeartbeatAt, Deadline: t.Deadline,
		HeartbeatDue: t.HeartbeatDue, StartDue: t.StartDue, Result: t.Result, HeartbeatDetails: t.HeartbeatDetails,
		EagerTokens: t.EagerTokens, Flow: t.Flow, Priority: t.Priority, FairKey: t.FairKey, FairWeight: t.FairWeight, DeadlineIndexed: t.DeadlineIndexed,
		EagerOf: t.EagerOf}
}

// DecodeTask decodes a stored task record (binary, or the JSON of an older
// weftd).
func DecodeTask(b []byte, t *Task) error {
	var s runcodec.Task
	if err := runcodec.DecodeTask(b, &s); err != nil {
		return err
	}
	*t = Task{FormatVersion: s.FormatVersion, TaskID: s.TaskID, RunID: s.RunID, TenantID: s.TenantID,
		ActionID: s.ActionID, Kind: TaskKind(s.Kind), Queue: s.Queue, Activity: s.Activity,
		LogicalAttempt: s.LogicalAttempt, EngineAttempt: s.EngineAttempt, NotBefore: s.NotBefore, Seq: s.Seq,
		Timeout: s.Timeout, HeartbeatTimeout: s.HeartbeatTimeout, State: TaskState(s.State), Token: s.Token,
		WorkerID: s.WorkerID, ClaimedAt: s.ClaimedAt, HeartbeatAt: s.HeartbeatAt, Deadline: s.Deadline,
		HeartbeatDue: s.HeartbeatDue, StartDue: s.StartDue, Result: s.Result, HeartbeatDetails: s.HeartbeatDetails,
		EagerTokens: s.EagerTokens, Flow: s.Flow, Priority: s.Priority, FairKey: s.FairKey, FairWeight: s.FairWeight, DeadlineIndexed: s.DeadlineIndexed,
		EagerOf: s.EagerOf}
	return nil
}

// TimerKind names what a timer does when it fires.
type TimerKind string

// The timer kinds.
const (
	TimerAttempt   TimerKind = "attempt"   // ref: task id; the attempt's timeout
	TimerHeartbeat TimerKind = "heartbeat" // ref: task id; the heartbeat timeout
	TimerBackoff   TimerKind = "backoff"   // ref: action id; the next engine attempt is due
	TimerWorkflow  TimerKind = "workflow"  // the workflow timeout
	TimerDrain     TimerKind = "drain"     // a pause's drain timeout
	TimerWait      TimerKind = "wait"      // ref: action id; a manual or signal wait's timeout
	TimerStart     TimerKind = "start"     // ref: task id; the schedule-to-start timeout of a ready task
	TimerSleep     TimerKind = "sleep"     // ref: action id; a sleep step's wake time
	// The sub-workflow timers (docs/semantics.md#sub-workflows).
	TimerChildStart TimerKind = "child-start" // ref: action id; start the step's child run
	TimerChildEnd   TimerKind = "child-end"   // ref: the child run id; the child ended: finish the parent's step
	TimerParent     TimerKind = "parent"      // ref: the parent run id; bring the child in line with its parent
)

// Timer is a durable timer's value, stored in binary (runcodec.Timer,
// docs/persisted-format.md#binary-records).
type Timer struct {
	RunID string    `json:"run_id"`
	Kind  TimerKind `json:"kind"`
	Ref   string    `json:"ref,omitempty"`
	Due   time.Time `json:"due"`
	// Token ties an attempt or heartbeat timer to the claim it guards.
	Token string `json:"token,omitempty"`
}

// AppendTimer appends the timer's stored form (runcodec.Timer, binary) to b.
func (t *Timer) AppendTimer(b []byte) []byte {
	return runcodec.AppendTimer(b, &runcodec.Timer{RunID: t.RunID, Kind: string(t.Kind), Ref: t.Ref, Due: t.Due, Token: t.Token})
}

// DecodeTimer decodes a stored timer (binary, or the JSON of an older
// weftd).
func DecodeTimer(b []byte, t *Timer) error {
	var s runcodec.Timer
	if err := runcodec.DecodeTimer(b, &s); err != nil {
		return err
	}
	*t = Timer{RunID: s.RunID, Kind: TimerKind(s.Kind), Ref: s.Ref, Due: s.Due, Token: s.Token}
	return nil
}

// Fresh answers a copy of the record for one decision to change. A decision
// that does not commit is made again (the engine's commit pipeline), and the one made again must
// start from the record as it was read, not as the first one left it.
func (t *Task) Fresh() *Task {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// ReadyKey answers the task's queue entry key.
func (t *Task) ReadyKey() []byte {
	return ReadyTaskKey(t.TenantID, t.Lane(), t.NotBefore, t.Seq, t.TaskID)
}

// Lane answers the lane the task's ready entry is kept in: its priority's
// lane of its queue, or that lane's sub-lane of its fairness key
// (FairLane) when it has one.
func (t *Task) Lane() string {
	if t.FairKey != "" {
		return FairLane(t.Queue, t.Priority, t.FairKey)
	}
	return Lane(t.Queue, t.Priority)
}

// FairLane answers the sub-lane of a queue's priority where the ready
// entries of one fairness key are kept (docs/semantics.md#fairness):
// "{queue}~p{priority}~f{key}", for every priority, 3 included, so that the
// fair sub-lanes of a priority sort together, among the queue's other
// lanes (OtherLanesRange), right after its plain lane.
func FairLane(queue string, priority int, key string) string {
	if priority == 0 {
		priority = DefaultPriority
	}
	return queue + LaneMark + strconv.Itoa(priority) + FairMark + key
}

// FairMark separates a lane's priority from its fairness key.
const FairMark = "~f"

// FairLanesRange bounds the ready entries of every fair sub-lane of one
// priority of a queue.
func FairLanesRange(tenant, queue string, priority int) (start, end []byte) {
	start = append(keyspace.Ready.KeyPrefix(tenant), store.EscapeComponent(FairLane(queue, priority, ""))...)
	return start, store.PrefixEnd(start)
}

// ParseLane splits a lane into its queue, its priority and, for a fair
// sub-lane, its fairness key. A queue name holds no '~', so the first one
// begins the lane's marks, whatever the key holds.
func ParseLane(lane string) (queue string, priority int, fairKey string, fair bool) {
	i := strings.IndexByte(lane, '~')
	if i < 0 {
		return lane, DefaultPriority, "", false
	}
	queue, rest := lane[:i], lane[i:]
	priority = DefaultPriority
	if r, ok := strings.CutPrefix(rest, LaneMark); ok {
		digits := r
		if j := strings.IndexByte(r, '~'); j >= 0 {
			digits, rest = r[:j], r[j:]
		} else {
			rest = ""
		}
		if p, err := strconv.Atoi(digits); err == nil {
			priority = p
		}
	}
	if k, ok := strings.CutPrefix(rest, FairMark); ok {
		return queue, priority, k, true
	}
	return queue, priority, "", false
}

// Lane answers where in a queue the ready entries of a priority are kept
// (docs/semantics.md#priority): the queue itself for the default priority 3
// (and zero), so entries written before priorities existed keep their
// place; "{queue}~p{priority}" for the others — '~' is not allowed in a
// queue name, so a lane never collides with a queue. A poll scans the
// lanes from priority 1 to 5.
func Lane(queue string, priority int) string {
	if priority == 0 || priority == DefaultPriority {
		return queue
	}
	return queue + LaneMark + strconv.Itoa(priority)
}

// LaneMark separates a queue from a lane's priority.
const LaneMark = "~p"

// Lanes answers a queue's lanes, first handed out first.
func Lanes(queue string) []string {
	return []string{Lane(queue, 1), Lane(queue, 2), queue, Lane(queue, 4), Lane(queue, 5)}
}

// OtherLanesRange bounds the ready entries of a queue's lanes other than
// the queue itself (priorities 1, 2, 4 and 5), which sort together, in
// priority order: a poll finds the lanes that hold entries with one
// bounded read each.
func OtherLanesRange(tenant, queue string) (start, end []byte) {
	start = append(keyspace.Ready.KeyPrefix(tenant), store.EscapeComponent(queue+LaneMark)...)
	return start, store.PrefixEnd(start)
}

// LaneOfKey answers the lane of a ready entry's key.
func LaneOfKey(key []byte) (string, bool) {
	parts, err := store.SplitKey(key)
	if err != nil || len(parts) < 3 {
		return "", false
	}
	return parts[2], true
}

// LanePriority answers the priority of a queue's lane.
func LanePriority(lane string) int {
	_, p, _, _ := ParseLane(lane)
	return p
}

// QueueOfLane answers the queue a lane belongs to.
func QueueOfLane(lane string) string {
	q, _, _, _ := ParseLane(lane)
	return q
}

// The engine's key layout (docs/persisted-format.md lists every record);
// the run's log — events, checkpoint, outbox — is engine/runlog's.
// Components go through the store's escaping codec, so no identifier can
// collide with another or break out of its prefix.

// RunKey holds a run's immutable record: definition, context, input.
func RunKey(runID string) []byte { return keyspace.Run.Key(runID) }

// RunRequestKey maps the submission tuple of docs/semantics.md#run-request-idempotency to a run.
func RunRequestKey(tenant, project, env, planID, planVersion, runRequestID string) []byte {
	return keyspace.RunRequest.Key(tenant, project, env, planID, planVersion, runRequestID)
}

// RunIndexKey lists the runs of a tenant that an older weftd submitted,
// newest first (inverted creation time). It is never written: it is read
// beside each status's RunStatusKey entries, which list the present
// layout's runs in the same order, and removed with the run.
func RunIndexKey(tenant string, created time.Time, runID string) []byte {
	return keyspace.RunIndex.Key(tenant, store.Int64(-created.UnixNano()), runID)
}

// RunIndexPrefix is the prefix of a tenant's run index.
func RunIndexPrefix(tenant string) []byte { return keyspace.RunIndex.KeyPrefix(tenant) }

// RunStatusKey indexes a run under its current status, in the run index's
// order within a tenant (newest first): rs:{status}:{tenant}::{-created}:{run}.
// The status comes first so that runs are counted by status across
// tenants without reading their checkpoints, and the empty component sets
// these entries apart from an older run's (OlderRunStatusKey: a run id is
// never empty), so one status of a tenant is one prefix (RunStatusPrefix).
func RunStatusKey(tenant string, status runstate.RunStatus, created time.Time, runID string) []byte {
	return keyspace.RunStatus.Key(string(status), tenant, "", store.Int64(-created.UnixNano()), runID)
}

// RunStatusPrefix begins the entries of one status in a tenant (RunStatusKey);
// the rest of each key after it is a run index position (RunIndexPosition).
func RunStatusPrefix(tenant string, status runstate.RunStatus) []byte {
	return keyspace.RunStatus.KeyPrefix(string(status), tenant, "")
}

// OlderRunStatusKey is the status entry of a run whose checkpoint is not
// CompactIndex: rs:{status}:{tenant}:{run}, beside its sx: status entry.
// It is never written; it is moved to RunStatusKey by the run's next
// decision that changes its indexed fields, or removed with the run.
func OlderRunStatusKey(tenant string, status runstate.RunStatus, runID string) []byte {
	return keyspace.RunStatus.Key(string(status), tenant, runID)
}

// PendingTriggerKey marks a run whose submission asked to start it, until the
// trigger commits; recovery finishes what a crash interrupted.
func PendingTriggerKey(runID string) []byte { return keyspace.PendingTrigger.Key(runID) }

// ReadyTaskKey is a task waiting in its queue: the task queue key of
// docs/semantics.md#persisted-format, with the tenant before the queue so that one
// tenant's workers never see another's tasks.
// Within one instant, tasks keep the order they were dispatched in (seq).
func ReadyTaskKey(tenant, queue string, notBefore time.Time, seq uint64, taskID string) []byte {
	return keyspace.Ready.Key(tenant, queue, store.Time(notBefore), store.Uint64(seq), taskID)
}

// ReadyTaskRange bounds a queue's tasks that are due at now.
func ReadyTaskRange(tenant, queue string, now time.Time) (start, end []byte) {
	return QueuePrefix(tenant, queue), keyspace.Ready.KeyPrefix(tenant, queue, store.Time(now.Add(time.Nanosecond)))
}

// QueuePrefix begins every ready entry of one queue.
func QueuePrefix(tenant, queue string) []byte { return keyspace.Ready.KeyPrefix(tenant, queue) }

// TaskKey holds a task's claim state.
func TaskKey(taskID string) []byte { return keyspace.Task.Key(taskID) }

// TimerKey is a durable timer; timers sort by due time.
func TimerKey(due time.Time, runID, kind, ref string) []byte {
	return keyspace.Timer.Key(store.Time(due), runID, kind, ref)
}

// TimerRange bounds the timers due at now.
func TimerRange(now time.Time) (start, end []byte) {
	return keyspace.Timer.KeyPrefix(), keyspace.Timer.KeyPrefix(store.Time(now.Add(time.Nanosecond)))
}

// DeadlineBucketWidth is the width of a deadline index entry's bucket:
// one entry per run indexes every claim of the run whose deadline falls in
// the same DeadlineBucketWidth of time.
const DeadlineBucketWidth = 10 * time.Second

// DeadlineBucket answers the bucket of an attempt deadline: its start.
func DeadlineBucket(deadline time.Time) time.Time {
	return deadline.Truncate(DeadlineBucketWidth).UTC()
}

// DeadlineKey is the run's deadline index entry of the bucket that begins
// at bucket (DeadlineBucket); entries sort by bucket.
func DeadlineKey(bucket time.Time, runID string) []byte {
	return keyspace.DeadlineIndex.Key(store.Time(bucket), runID)
}

// DeadlineRange bounds the deadline index entries whose bucket has begun
// at now.
func DeadlineRange(now time.Time) (start, end []byte) {
	return keyspace.DeadlineIndex.KeyPrefix(), keyspace.DeadlineIndex.KeyPrefix(store.Time(now.Add(time.Nanosecond)))
}

// ParseDeadlineKey answers the bucket and run of a deadline index entry's key.
func ParseDeadlineKey(key []byte) (bucket time.Time, runID string, err error) {
	parts, err := store.SplitKey(key)
	if err != nil {
		return time.Time{}, "", err
	}
	if len(parts) != 3 || parts[0] != keyspace.DeadlineIndex.Name {
		return time.Time{}, "", errors.New("not a deadline index key")
	}
	if bucket, err = store.ParseTime(parts[1]); err != nil {
		return time.Time{}, "", err
	}
	return bucket, parts[2], nil
}

// AppendDeadline appends a deadline index entry's value, the earliest
// deadline it indexes (runcodec.AppendDeadline), to b.
func AppendDeadline(b []byte, earliest time.Time) []byte { return runcodec.AppendDeadline(b, earliest) }

// DecodeDeadline decodes a deadline index entry's value.
func DecodeDeadline(b []byte) (time.Time, error) { return runcodec.DecodeDeadline(b) }

// TaskPrefix begins the keys of every task of a run: task ids start with
// the run id and "/", and run ids never contain "/".
func TaskPrefix(runID string) []byte { return keyspace.Task.Key(runID + "/") }
