package engine

import (
	"time"

	"github.com/weft-dev/weft/engine/internal/cache"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
)

// Checkpoint claims (engine/internal/cache): a hand-off keeps its claim in
// the task's step instead of writing the task's record. Every reader of a
// task by id reads it through cache.Records.Task, which answers the
// checkpoint claim at version 0 when the record is absent, and conditions
// its decision with cache.TaskUnchanged; a decision on such a claim takes
// it again from the state it decides on (taskIn), which may be newer than
// the one it was read from.

// claimInCheckpoint keeps claim t in its step st instead of its task
// record, when it can (cache.CheckpointClaim builds the record back): a
// hand-off of a task new in the decision, whose record was never written,
// of an activity outside flow control and fairness, with its deadline
// indexed. It reports whether it did; the decision then writes no record.
func claimInCheckpoint(c *change, t *record.Task, st *runstate.StepState, handedOff *readyEntry) bool {
	if handedOff == nil || !handedOff.newTask || t.Kind != TaskActivity || t.Flow != nil || t.FairKey != "" ||
		!t.DeadlineIndexed || st.TaskID != t.TaskID || writesKey(c, record.TaskKey(t.TaskID)) {
		return false
	}
	short := shortToken(c.run.RunID, t.Token)
	if st.ClaimToken != "" && st.ClaimToken != short {
		st.EndedClaimToken = st.ClaimToken // a duplicate of its report is still recognised
	}
	st.ClaimToken, st.ClaimWorker, st.ClaimedAt = short, t.WorkerID, t.ClaimedAt
	st.ClaimDeadline, st.ClaimHeartbeatDue = t.Deadline, t.HeartbeatDue
	handedOff.newTask = false // its record is never written
	c.claims = append(c.claims, t)
	c.dirty = true
	return true
}

// taskIn answers task t as the decision's state holds it: t itself when it
// was read from its record (version not 0), else the claim the state's
// checkpoint holds for it now, or nil when it holds none.
func taskIn(c *change, t *record.Task, version uint64) *record.Task {
	if t == nil || version != 0 {
		return t
	}
	return cache.CheckpointClaim(c.run, c.state, t.TaskID)
}

// endCheckpointClaim forgets, as a report ends claim t, what its step kept
// of it but its token, which recognises a duplicate of the report
// (cache.CheckpointClaim, claimEnded).
func endCheckpointClaim(c *change, t *record.Task) {
	if st := checkpointClaimStep(c, t); st != nil {
		st.ClaimWorker, st.ClaimedAt, st.ClaimDeadline, st.ClaimHeartbeatDue = "", time.Time{}, time.Time{}, time.Time{}
		c.dirty = true
	}
}

// dropCheckpointClaim forgets claim t from its step, as a decision that
// writes its record (a timeout, a give-back) ends it: the record says it
// from then on.
func dropCheckpointClaim(c *change, t *record.Task) {
	if st := checkpointClaimStep(c, t); st != nil {
		st.ClaimToken, st.ClaimWorker, st.ClaimedAt, st.ClaimDeadline, st.ClaimHeartbeatDue = "", "", time.Time{}, time.Time{}, time.Time{}
		c.dirty = true
	}
}

// checkpointClaimStep answers the step that keeps claim t, or nil.
func checkpointClaimStep(c *change, t *record.Task) *runstate.StepState {
	st := c.state.Step(t.ActionID)
	if st == nil || st.ClaimToken == "" || fullToken(c.run.RunID, st.ClaimToken) != t.Token {
		return nil
	}
	return st
}

// madeClaims answers the claims the decision made: those whose records it
// writes and those its checkpoint keeps.
func madeClaims(c *change) []*record.Task {
	var out []*record.Task
	for i := range c.taskPuts {
		if t := &c.taskPuts[i].Record; t.State == record.TaskClaimed {
			out = append(out, t)
		}
	}
	return append(out, c.claims...)
}

// checkpointClaimTask answers the task of the claim step st keeps.
func checkpointClaimTask(runID string, st *runstate.StepState) string {
	return parseTokenTask(fullToken(runID, st.ClaimToken))
}

// parseTokenTask answers the task a well-formed token names.
func parseTokenTask(token string) string {
	id, _ := parseToken(token)
	return id
}
