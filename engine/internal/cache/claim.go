package cache

import (
	"context"
	"errors"
	"strings"

	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Checkpoint claims. A hand-off (the claim a decision makes for a waiting
// poll, or eager dispatch for a completing worker) of an activity outside
// flow control and fairness writes no task record: the checkpoint its
// decision rewrites keeps the claim in the task's step
// (runstate.StepState.ClaimToken and the fields after it). The task's
// record is absent until something other than a report ends or changes the
// claim — a heartbeat, a timeout, a give-back, a retirement — and that
// first write supersedes the step's claim. So a task is what its record
// says when it has one, else what its run's checkpoint claim says
// (CheckpointClaim), read at version 0: a decision on it is conditioned on
// the record still being absent (store.IfAbsent), where one on a record is
// conditioned on its version.

// CheckpointClaim answers the task record that the claim of task taskID in
// run's checkpoint s stands for, or nil when s holds none. The claim is the
// step's current one (claimed) or the one before it that a report ended, as
// the step keeps it for duplicates: the record answered is then still
// claimed, and claimEnded (engine/report.go) reads from the step's attempts
// how the report ended it.
func CheckpointClaim(run *record.Run, s *runstate.State, taskID string) *record.Task {
	actionID, ok := TaskAction(run.RunID, taskID)
	if !ok {
		return nil
	}
	st := s.Step(actionID)
	if st == nil {
		return nil
	}
	short := strings.TrimPrefix(taskID, run.RunID+"/")
	var token string
	switch {
	case claimOf(st.ClaimToken) == short:
		token = st.ClaimToken
	case claimOf(st.EndedClaimToken) == short:
		token = st.EndedClaimToken // its report ended it; the step keeps only its token
	default:
		return nil
	}
	a := run.Action(actionID)
	if a == nil {
		return nil
	}
	logical, engine := taskAttempts(short)
	t := &record.Task{
		FormatVersion: record.Version, TaskID: taskID, RunID: run.RunID, TenantID: run.TenantID,
		ActionID: actionID, Kind: record.TaskActivity, Queue: a.Queue, Activity: a.Activity,
		LogicalAttempt: logical, EngineAttempt: engine, Timeout: a.Timeout, HeartbeatTimeout: a.HeartbeatTimeout,
		State: record.TaskClaimed, Token: run.RunID + "/" + token, DeadlineIndexed: true,
	}
	if p := run.EffectivePriority(); p != record.DefaultPriority {
		t.Priority = p
	}
	if token == st.ClaimToken {
		t.WorkerID, t.ClaimedAt, t.HeartbeatAt = st.ClaimWorker, st.ClaimedAt, st.ClaimedAt
		t.NotBefore, t.Deadline, t.HeartbeatDue = st.ClaimedAt, st.ClaimDeadline, st.ClaimHeartbeatDue
	}
	for _, other := range s.Steps { // the step whose completion claimed it, by eager dispatch
		for _, tok := range other.EagerTokens {
			if tok == token {
				t.EagerOf = other.ActionID
			}
		}
	}
	return t
}

// claimOf answers the task a short claim token names, without its run's
// id: the token up to its "#".
func claimOf(short string) string {
	if i := strings.LastIndexByte(short, '#'); i > 0 {
		return short[:i]
	}
	return ""
}

// TaskAction answers the step of the run's task id
// ("{run}/{action}/{logical}/{kind}{attempt}").
func TaskAction(runID, taskID string) (string, bool) {
	rest, ok := strings.CutPrefix(taskID, runID+"/")
	if !ok {
		return "", false
	}
	parts := strings.Split(rest, "/")
	if len(parts) != 3 {
		return "", false
	}
	return parts[0], true
}

// TaskRun answers the run of a task id: what comes before its last three
// parts (action ids and attempts hold no "/").
func TaskRun(taskID string) (string, bool) {
	i := strings.LastIndexByte(taskID, '/')
	for n := 0; n < 2 && i > 0; n++ {
		i = strings.LastIndexByte(taskID[:i], '/')
	}
	if i <= 0 {
		return "", false
	}
	return taskID[:i], true
}

// taskAttempts answers the logical and engine attempts that a task id
// without its run's id ("{action}/{logical}/activity{attempt}") names.
func taskAttempts(short string) (logical, engine int) {
	parts := strings.Split(short, "/")
	if len(parts) != 3 {
		return 0, 0
	}
	logical = atoi(parts[1])
	engine = atoi(strings.TrimLeft(parts[2], "abcdefghijklmnopqrstuvwxyz"))
	return logical, engine
}

// atoi answers a decimal number, 0 for anything else.
func atoi(s string) int {
	n := 0
	for _, c := range []byte(s) {
		if c < '0' || c > '9' {
			return 0
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// Task reads task taskID: its record and version, or, when it has none,
// the claim its run's checkpoint holds for it (CheckpointClaim) at version
// 0. store.ErrNotFound: neither.
func (e *Records) Task(ctx context.Context, taskID string) (*record.Task, uint64, error) {
	t, version, err := e.LoadTask(ctx, taskID)
	if !errors.Is(err, store.ErrNotFound) {
		return t, version, err
	}
	runID, ok := TaskRun(taskID)
	if !ok {
		return nil, 0, err
	}
	run, rerr := e.LoadRun(ctx, runID)
	if rerr != nil {
		return nil, 0, err // no run: no claim either
	}
	s, _, serr := e.LoadStoredCheckpoint(ctx, runID)
	if serr != nil {
		return nil, 0, err
	}
	if t := CheckpointClaim(run, s, taskID); t != nil {
		return t, 0, nil
	}
	return nil, 0, err
}

// TaskUnchanged is the condition a decision on task taskID read at version
// puts on its record: unchanged since, or still absent when the task was
// its run's checkpoint claim (version 0).
func TaskUnchanged(taskID string, version uint64) store.Condition {
	if version == 0 {
		return store.IfAbsent(record.TaskKey(taskID))
	}
	return store.IfVersion(record.TaskKey(taskID), version)
}
