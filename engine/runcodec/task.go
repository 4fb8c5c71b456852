package runcodec

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weft-dev/weft/engine/definition"
)

// FormatTask is a task record, version 1: the fields of Task
// (docs/persisted-format.md#binary-records numbers them).
const FormatTask byte = 0x04

// Task is a task's durable state as stored at task:{id}: the engine's task
// record, field for field. Its JSON is the form every task record had
// before the binary one, which still loads.
type Task struct {
	FormatVersion    int                 `json:"version"`
	TaskID           string              `json:"task_id"`
	RunID            string              `json:"run_id"`
	TenantID         string              `json:"tenant_id"`
	ActionID         string              `json:"action_id"`
	Kind             string              `json:"kind"`
	Queue            string              `json:"queue"`
	Activity         string              `json:"activity"`
	LogicalAttempt   int                 `json:"logical_attempt"`
	EngineAttempt    int                 `json:"engine_attempt"`
	NotBefore        time.Time           `json:"not_before"`
	Seq              uint64              `json:"seq"`
	Timeout          definition.Duration `json:"timeout_ms"`
	HeartbeatTimeout definition.Duration `json:"heartbeat_timeout_ms,omitempty"`
	State            string              `json:"state"`
	Token            string              `json:"token,omitempty"`
	WorkerID         string              `json:"worker_id,omitempty"`
	ClaimedAt        time.Time           `json:"claimed_at,omitzero"`
	HeartbeatAt      time.Time           `json:"heartbeat_at,omitzero"`
	Deadline         time.Time           `json:"deadline,omitzero"`
	HeartbeatDue     time.Time           `json:"heartbeat_due,omitzero"`
	StartDue         time.Time           `json:"start_due,omitzero"`
	Result           string              `json:"result,omitempty"`
	HeartbeatDetails json.RawMessage     `json:"heartbeat_details,omitempty"`
	EagerTokens      []string            `json:"eager_tokens,omitempty"`
	Flow             *TaskFlow           `json:"flow,omitempty"`
	Priority         int                 `json:"priority,omitempty"`
	// FairKey is the task's fairness key ("": the implicit key) and
	// FairWeight its weight (zero: 1) (docs/semantics.md#fairness).
	FairKey         string  `json:"fair_key,omitempty"`
	FairWeight      float64 `json:"fair_weight,omitempty"`
	DeadlineIndexed bool    `json:"deadline_indexed,omitempty"`
	EagerOf         string  `json:"eager_of,omitempty"`
}

// TaskFlow is a task's flow control: the values its step's keys answered
// when the task was created (docs/semantics.md#step-concurrency). Nil: the
// task's step has none.
type TaskFlow struct {
	ConcurrencyKey string `json:"concurrency_key,omitempty"`
	ThrottleKey    string `json:"throttle_key,omitempty"`
	// Err says why a key could not be evaluated (rule and message, never a
	// value): the task is never claimed and its attempt fails.
	Err string `json:"error,omitempty"`
}

// The fields of a task's flow control (task field 29).
const (
	flowConcurrencyKey = 1
	flowThrottleKey    = 2
	flowErr            = 3
)

// The fields of a task record. A task's id begins with its run's and its
// claim token with its id (engine/polltasks.go), so both are
// stored as what follows the prefix when they have it (fields 24 and 25),
// and the run id as its 16 bytes when it is a canonical UUID (field 23).
const (
	taskVersion          = 1
	taskID               = 2 // when it does not begin with "{run_id}/"
	taskRunID            = 3 // when not a canonical lowercase UUID
	taskTenantID         = 4
	taskActionID         = 5
	taskKind             = 6
	taskQueue            = 7
	taskActivity         = 8
	taskLogicalAttempt   = 9
	taskEngineAttempt    = 10
	taskNotBefore        = 11
	taskSeq              = 12
	taskTimeout          = 13 // nanoseconds, sint64
	taskHeartbeatTimeout = 14 // nanoseconds, sint64
	taskState            = 15
	taskToken            = 16 // when it does not begin with "{task_id}#"
	taskWorkerID         = 17
	taskClaimedAt        = 18
	taskHeartbeatAt      = 19
	taskDeadline         = 20
	taskHeartbeatDue     = 21
	taskResult           = 22
	taskRunUUID          = 23
	taskIDSuffix         = 24
	taskTokenSuffix      = 25
	taskStartDue         = 26
	taskHeartbeatDetails = 27 // JSON
	taskEagerTokens      = 28 // repeated
	taskFlow             = 29 // TaskFlow, a message (present: the step has flow control)
	taskPriority         = 30 // the run's priority, 1–5 (absent: 3)
	taskFairKey          = 37 // the fairness key (absent: the implicit key)
	taskFairWeight       = 38 // the fairness weight's IEEE 754 bits (absent: 1)
	taskDeadlineIndexed  = 33 // the deadline is in the run's tmd: entry, not an attempt timer
	taskEagerOf          = 34 // the step whose completion claimed the task by eager dispatch
)

// AppendTask appends a task record's stored form to b.
func AppendTask(b []byte, t *Task) []byte {
	b = append(b, FormatTask)
	b = appendInt(b, taskVersion, int64(t.FormatVersion))
	if u, ok := uuidBytes(t.RunID); ok {
		b = appendBytes(b, taskRunUUID, u[:])
	} else {
		b = appendString(b, taskRunID, t.RunID)
	}
	if suffix, ok := strings.CutPrefix(t.TaskID, t.RunID+"/"); ok && suffix != "" {
		b = appendString(b, taskIDSuffix, suffix)
	} else {
		b = appendString(b, taskID, t.TaskID)
	}
	b = appendString(b, taskTenantID, t.TenantID)
	b = appendString(b, taskActionID, t.ActionID)
	b = appendString(b, taskKind, t.Kind)
	b = appendString(b, taskQueue, t.Queue)
	b = appendString(b, taskActivity, t.Activity)
	b = appendInt(b, taskLogicalAttempt, int64(t.LogicalAttempt))
	b = appendInt(b, taskEngineAttempt, int64(t.EngineAttempt))
	b = appendTime(b, taskNotBefore, t.NotBefore)
	b = appendUint(b, taskSeq, t.Seq)
	b = appendInt(b, taskTimeout, int64(t.Timeout))
	b = appendInt(b, taskHeartbeatTimeout, int64(t.HeartbeatTimeout))
	b = appendString(b, taskState, t.State)
	if suffix, ok := strings.CutPrefix(t.Token, t.TaskID+"#"); ok && suffix != "" {
		b = appendString(b, taskTokenSuffix, suffix)
	} else {
		b = appendString(b, taskToken, t.Token)
	}
	b = appendString(b, taskWorkerID, t.WorkerID)
	b = appendTime(b, taskClaimedAt, t.ClaimedAt)
	b = appendTime(b, taskHeartbeatAt, t.HeartbeatAt)
	b = appendTime(b, taskDeadline, t.Deadline)
	b = appendTime(b, taskHeartbeatDue, t.HeartbeatDue)
	b = appendTime(b, taskStartDue, t.StartDue)
	b = appendBytes(b, taskHeartbeatDetails, t.HeartbeatDetails)
	for _, s := range t.EagerTokens {
		b = appendElem(b, taskEagerTokens, s)
	}
	if f := t.Flow; f != nil {
		b = appendMessage(b, taskFlow, func(b []byte) []byte {
			b = appendString(b, flowConcurrencyKey, f.ConcurrencyKey)
			b = appendString(b, flowThrottleKey, f.ThrottleKey)
			return appendString(b, flowErr, f.Err)
		})
	}
	b = appendInt(b, taskPriority, int64(t.Priority))
	b = appendString(b, taskFairKey, t.FairKey)
	if t.FairWeight != 0 {
		b = appendUint(b, taskFairWeight, math.Float64bits(t.FairWeight))
	}
	b = appendBool(b, taskDeadlineIndexed, t.DeadlineIndexed)
	b = appendString(b, taskEagerOf, t.EagerOf)
	return appendString(b, taskResult, t.Result)
}

// decodeFlow decodes a task's flow control.
func decodeFlow(b []byte) (*TaskFlow, error) {
	f := &TaskFlow{}
	err := eachField(b, func(n protowire.Number, fd field) error {
		var err error
		switch n {
		case flowConcurrencyKey:
			f.ConcurrencyKey, err = fd.str()
		case flowThrottleKey:
			f.ThrottleKey, err = fd.str()
		case flowErr:
			f.Err, err = fd.str()
		}
		return err
	})
	return f, err
}

// IsTask reports whether a stored value is a binary task record.
func IsTask(b []byte) bool { return len(b) > 0 && b[0] == FormatTask }

// DecodeTask decodes a stored task record, in its binary form or as the
// JSON every task record was stored as before.
func DecodeTask(b []byte, t *Task) error {
	switch {
	case IsTask(b):
		*t = Task{}
		if err := decodeTask(b[1:], t); err != nil {
			return fmt.Errorf("task: %w", err)
		}
		return nil
	case isJSON(b):
		*t = Task{}
		return json.Unmarshal(b, t)
	default:
		return fmt.Errorf("task: %w", ErrUnknownFormat)
	}
}

// decodeTask decodes the fields of a task record onto t. The ids stored as
// suffixes are put back once every field is read, whatever their order.
func decodeTask(b []byte, t *Task) error {
	var idSuffix, tokenSuffix string
	var hasIDSuffix, hasTokenSuffix bool
	err := eachField(b, func(n protowire.Number, f field) error {
		var err error
		var x int64
		switch n {
		case taskVersion:
			x, err = f.int()
			t.FormatVersion = int(x)
		case taskID:
			t.TaskID, err = f.str()
			hasIDSuffix = false
		case taskRunID:
			t.RunID, err = f.str()
		case taskRunUUID:
			var v []byte
			if v, err = f.bytes(); err == nil {
				t.RunID, err = uuidString(v)
			}
		case taskIDSuffix:
			idSuffix, err = f.str()
			hasIDSuffix = true
		case taskTenantID:
			t.TenantID, err = f.str()
		case taskActionID:
			t.ActionID, err = f.str()
		case taskKind:
			t.Kind, err = f.str()
		case taskQueue:
			t.Queue, err = f.str()
		case taskActivity:
			t.Activity, err = f.str()
		case taskLogicalAttempt:
			x, err = f.int()
			t.LogicalAttempt = int(x)
		case taskEngineAttempt:
			x, err = f.int()
			t.EngineAttempt = int(x)
		case taskNotBefore:
			t.NotBefore, err = f.time()
		case taskSeq:
			t.Seq, err = f.uint()
		case taskTimeout:
			x, err = f.int()
			t.Timeout = definition.Duration(x)
		case taskHeartbeatTimeout:
			x, err = f.int()
			t.HeartbeatTimeout = definition.Duration(x)
		case taskState:
			t.State, err = f.str()
		case taskToken:
			t.Token, err = f.str()
			hasTokenSuffix = false
		case taskTokenSuffix:
			tokenSuffix, err = f.str()
			hasTokenSuffix = true
		case taskWorkerID:
			t.WorkerID, err = f.str()
		case taskClaimedAt:
			t.ClaimedAt, err = f.time()
		case taskHeartbeatAt:
			t.HeartbeatAt, err = f.time()
		case taskDeadline:
			t.Deadline, err = f.time()
		case taskHeartbeatDue:
			t.HeartbeatDue, err = f.time()
		case taskStartDue:
			t.StartDue, err = f.time()
		case taskResult:
			t.Result, err = f.str()
		case taskPriority:
			x, err = f.int()
			t.Priority = int(x)
		case taskFairKey:
			t.FairKey, err = f.str()
		case taskFairWeight:
			var u uint64
			if u, err = f.uint(); err == nil {
				t.FairWeight = math.Float64frombits(u)
			}
		case taskDeadlineIndexed:
			t.DeadlineIndexed, err = f.bool()
		case taskEagerOf:
			t.EagerOf, err = f.str()
		case taskFlow:
			var v []byte
			if v, err = f.bytes(); err == nil {
				t.Flow, err = decodeFlow(v)
			}
		case taskEagerTokens:
			var s string
			if s, err = f.str(); err == nil {
				t.EagerTokens = append(t.EagerTokens, s)
			}
		case taskHeartbeatDetails:
			var v []byte
			if v, err = f.bytes(); err == nil && len(v) > 0 { // empty is absent
				t.HeartbeatDetails = bytes.Clone(v)
			}
		}
		return err
	})
	if err != nil {
		return err
	}
	if hasIDSuffix {
		t.TaskID = t.RunID + "/" + idSuffix
	}
	if hasTokenSuffix {
		t.Token = t.TaskID + "#" + tokenSuffix
	}
	return nil
}
