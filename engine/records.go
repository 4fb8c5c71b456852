package engine

import (
	"encoding/json"
	"time"

	"github.com/weft-dev/weft/engine/definition"
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

// taskRecord is a task's durable state, at task:{id}.
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
	// Result is how a done task ended ("completed" or "failed"), so that a
	// duplicate report with the same token is recognised.
	Result string `json:"result,omitempty"`
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
