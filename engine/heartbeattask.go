package engine

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/weft-dev/weft/engine/internal/cache"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/store"
)

// HeartbeatResult answers a heartbeat.
type HeartbeatResult struct {
	CancelRequested bool
	Deadline        time.Time
}

// HeartbeatParams names the claim a worker's heartbeat keeps alive.
type HeartbeatParams struct {
	TenantID string
	// Token is the claim's token, as the task carried it.
	Token string
	// Details are the activity's progress, JSON; nil keeps those the claim
	// has (docs/semantics.md#heartbeat-details).
	Details json.RawMessage
}

// HeartbeatTask keeps a claim alive. It touches only the task record; the
// heartbeat timer, when it fires, looks at the last heartbeat.
func (e *Engine) HeartbeatTask(ctx context.Context, p HeartbeatParams) (*HeartbeatResult, error) {
	return reportHeartbeat(ctx, e, p)
}

// reportHeartbeat keeps a claim alive: HeartbeatTask.
func reportHeartbeat(ctx context.Context, e *Engine, p HeartbeatParams) (*HeartbeatResult, error) {
	tenantID, token := p.TenantID, p.Token
	taskID, err := parseToken(token)
	if err != nil {
		return nil, err
	}
	if err := checkJSON(p.Details, "details", e.cfg.InlineResultLimit, ""); err != nil {
		return nil, err
	}
	var (
		t       *record.Task
		version uint64
		answer  *HeartbeatResult
	)
	_, err = commitDecision(ctx, e, decision{
		noRules: true,
		prepare: func(ctx context.Context, _ bool) (string, bool, error) {
			var err error
			t, version, err = e.records.Task(ctx, taskID)
			switch {
			case errors.Is(err, store.ErrNotFound) || (err == nil && t.TenantID != tenantID):
				return "", false, fault.ClaimLost(taskID, "")
			case err != nil:
				return "", false, err
			case t.State != record.TaskClaimed || t.Token != token:
				answer = &HeartbeatResult{CancelRequested: true}
				return "", true, nil
			}
			return t.RunID, false, nil
		},
		decide: func(ch *change) error {
			t := taskIn(ch, t, version)                                        // nil: a timeout, a give-back or a retirement ended it since
			if t == nil || t.Token != token || claimEnded(ch.state, t) != "" { // a report ended it, as the checkpoint says
				answer = &HeartbeatResult{CancelRequested: true}
				return nil
			}
			if ch.state.Status.Terminal() {
				answer = &HeartbeatResult{CancelRequested: true, Deadline: t.Deadline}
				return nil
			}
			answer = &HeartbeatResult{Deadline: t.Deadline}
			t = t.Fresh()
			t.HeartbeatAt = ch.now
			if len(p.Details) > 0 {
				t.HeartbeatDetails = p.Details
			}
			ch.require(cache.TaskUnchanged(taskID, version))
			ch.put(record.TaskKey(taskID), t) // a checkpoint claim's first heartbeat writes its record
			return nil
		},
		lostRace:  func(err error) bool { return conflictOn(err, record.TaskKey(taskID)) },
		contended: func() error { return fault.Contended("", taskID) },
	})
	if err != nil {
		return nil, err
	}
	return answer, nil
}
