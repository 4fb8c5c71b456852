package engine

import (
	"encoding/json"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

const recordVersion = 1

// runRecord is a run's immutable record, written once at submission.
type runRecord struct {
	FormatVersion int    `json:"version"`
	RunID         string `json:"run_id"`
	TenantID      string `json:"tenant_id"`
	ProjectID     string `json:"project_id"`
	EnvironmentID string `json:"environment_id"`
	RunRequestID  string `json:"run_request_id,omitempty"`
	SubmittedBy   string `json:"submitted_by,omitempty"`
	// TriggerSource is what started the run: api (also when empty), manual
	// or schedule.
	TriggerSource string                `json:"trigger_source,omitempty"`
	Definition    definition.Definition `json:"definition"`
	Input         json.RawMessage       `json:"input,omitempty"`
	PlanSHA256    string                `json:"plan_sha256"`
	CreatedAt     time.Time             `json:"created_at"`
}

// RunInfo is what a completion policy knows of a run.
type RunInfo struct {
	RunID       string
	TenantID    string
	SubmittedBy string
}

func (r *runRecord) info() *RunInfo {
	return &RunInfo{RunID: r.RunID, TenantID: r.TenantID, SubmittedBy: r.SubmittedBy}
}

// action answers the definition's action with id, or nil.
func (r *runRecord) action(id string) *definition.Action {
	for i := range r.Definition.Actions {
		if r.Definition.Actions[i].ID == id {
			return &r.Definition.Actions[i]
		}
	}
	return nil
}

// TaskKind is what a task asks a worker to do.
type TaskKind string

// The task kinds.
const (
	TaskActivity     TaskKind = "activity"
	TaskVerify       TaskKind = "verify"
	TaskCompensation TaskKind = "compensation"
)

// taskState is where a task is in its life.
type taskState string

const (
	taskReady   taskState = "ready"
	taskClaimed taskState = "claimed"
	taskDone    taskState = "done"
	taskLost    taskState = "lost"
)

// taskRecord is a task's durable state, at task:{id}, stored in binary
// (runcodec.Task, docs/persisted-format.md#binary-records).
type taskRecord struct {
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
	State            taskState           `json:"state"`
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
}

// stored answers the record as runcodec stores it.
func (t *taskRecord) stored() *runcodec.Task {
	return &runcodec.Task{FormatVersion: t.FormatVersion, TaskID: t.TaskID, RunID: t.RunID, TenantID: t.TenantID,
		ActionID: t.ActionID, Kind: string(t.Kind), Queue: t.Queue, Activity: t.Activity,
		LogicalAttempt: t.LogicalAttempt, EngineAttempt: t.EngineAttempt, NotBefore: t.NotBefore, Seq: t.Seq,
		Timeout: t.Timeout, HeartbeatTimeout: t.HeartbeatTimeout, State: string(t.State), Token: t.Token,
		WorkerID: t.WorkerID, ClaimedAt: t.ClaimedAt, HeartbeatAt: t.HeartbeatAt, Deadline: t.Deadline,
		HeartbeatDue: t.HeartbeatDue, StartDue: t.StartDue, Result: t.Result}
}

// decodeTaskRecord decodes a stored task record (binary, or the JSON of an
// older weftd).
func decodeTaskRecord(b []byte, t *taskRecord) error {
	var s runcodec.Task
	if err := runcodec.DecodeTask(b, &s); err != nil {
		return err
	}
	*t = taskRecord{FormatVersion: s.FormatVersion, TaskID: s.TaskID, RunID: s.RunID, TenantID: s.TenantID,
		ActionID: s.ActionID, Kind: TaskKind(s.Kind), Queue: s.Queue, Activity: s.Activity,
		LogicalAttempt: s.LogicalAttempt, EngineAttempt: s.EngineAttempt, NotBefore: s.NotBefore, Seq: s.Seq,
		Timeout: s.Timeout, HeartbeatTimeout: s.HeartbeatTimeout, State: taskState(s.State), Token: s.Token,
		WorkerID: s.WorkerID, ClaimedAt: s.ClaimedAt, HeartbeatAt: s.HeartbeatAt, Deadline: s.Deadline,
		HeartbeatDue: s.HeartbeatDue, StartDue: s.StartDue, Result: s.Result}
	return nil
}

// timerKind names what a timer does when it fires.
type timerKind string

const (
	timerAttempt   timerKind = "attempt"   // ref: task id; the attempt's timeout
	timerHeartbeat timerKind = "heartbeat" // ref: task id; the heartbeat timeout
	timerBackoff   timerKind = "backoff"   // ref: action id; the next engine attempt is due
	timerWorkflow  timerKind = "workflow"  // the workflow timeout
	timerDrain     timerKind = "drain"     // a pause's drain timeout
	timerWait      timerKind = "wait"      // ref: action id; a manual or signal wait's timeout
	timerStart     timerKind = "start"     // ref: task id; the schedule-to-start timeout of a ready task
)

// timerRecord is a durable timer's value.
type timerRecord struct {
	RunID string    `json:"run_id"`
	Kind  timerKind `json:"kind"`
	Ref   string    `json:"ref,omitempty"`
	Due   time.Time `json:"due"`
	// Token ties an attempt or heartbeat timer to the claim it guards.
	Token string `json:"token,omitempty"`
}

// fresh answers a copy of the record for one decision to change. A decision
// that does not commit is made again (mutate), and the one made again must
// start from the record as it was read, not as the first one left it.
func (t *taskRecord) fresh() *taskRecord {
	if t == nil {
		return nil
	}
	c := *t
	return &c
}

// readyKey answers the task's queue entry key.
func (t *taskRecord) readyKey() string {
	return string(readyTaskKey(t.TenantID, t.Queue, t.NotBefore, t.Seq, t.TaskID))
}

// The engine's key layout (docs/persisted-format.md lists every record);
// the run's log — events, checkpoint, outbox — is engine/runlog's.
// Components go through the store's escaping codec, so no identifier can
// collide with another or break out of its prefix.

// runKey holds a run's immutable record: definition, context, input.
func runKey(runID string) []byte { return store.Key("wf", runID) }

// runRequestKey maps the submission tuple of docs/semantics.md#run-request-idempotency to a run.
func runRequestKey(tenant, project, env, planID, planVersion, runRequestID string) []byte {
	return store.Key("rr", tenant, project, env, planID, planVersion, runRequestID)
}

// runIndexKey lists a tenant's runs, newest first (inverted creation time).
func runIndexKey(tenant string, created time.Time, runID string) []byte {
	return store.Key("ri", tenant, store.Int64(-created.UnixNano()), runID)
}

// runIndexPrefix is the prefix of a tenant's run index.
func runIndexPrefix(tenant string) []byte { return store.KeyPrefix("ri", tenant) }

// runStatusKey indexes a run under its current status, so that runs can be
// counted by status without reading their checkpoints. Moved in the batch
// of every status change.
func runStatusKey(tenant string, status runstate.RunStatus, runID string) []byte {
	return store.Key("rs", string(status), tenant, runID)
}

// pendingTriggerKey marks a run whose submission asked to start it, until the
// trigger commits; recovery finishes what a crash interrupted.
func pendingTriggerKey(runID string) []byte { return store.Key("pt", runID) }

// readyTaskKey is a task waiting in its queue: the task queue key of
// docs/semantics.md#persisted-format, with the tenant before the queue so that one
// tenant's workers never see another's tasks.
// Within one instant, tasks keep the order they were dispatched in (seq).
func readyTaskKey(tenant, queue string, notBefore time.Time, seq uint64, taskID string) []byte {
	return store.Key("op", tenant, queue, store.Time(notBefore), store.Uint64(seq), taskID)
}

// readyTaskRange bounds a queue's tasks that are due at now.
func readyTaskRange(tenant, queue string, now time.Time) (start, end []byte) {
	return queuePrefix(tenant, queue), store.KeyPrefix("op", tenant, queue, store.Time(now.Add(time.Nanosecond)))
}

// queuePrefix begins every ready entry of one queue.
func queuePrefix(tenant, queue string) []byte { return store.KeyPrefix("op", tenant, queue) }

// taskKey holds a task's claim state.
func taskKey(taskID string) []byte { return store.Key("task", taskID) }

// timerKey is a durable timer; timers sort by due time.
func timerKey(due time.Time, runID, kind, ref string) []byte {
	return store.Key("tmr", store.Time(due), runID, kind, ref)
}

// timerRange bounds the timers due at now.
func timerRange(now time.Time) (start, end []byte) {
	return store.KeyPrefix("tmr"), store.KeyPrefix("tmr", store.Time(now.Add(time.Nanosecond)))
}
