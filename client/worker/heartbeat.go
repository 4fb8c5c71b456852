package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// ErrNoActivity is Heartbeat's answer outside an activity.
var ErrNoActivity = errors.New("worker: no activity runs in this context")

// Heartbeat sends a heartbeat for the activity running in ctx now, with
// details as its progress: any value encoding/json writes (nil sends none
// and keeps those sent before). weftd keeps the latest details of the
// attempt; when the attempt fails or times out, the next attempt's
// [ActivityInfo].HeartbeatDetails carries them
// (docs/semantics.md#heartbeat-details). The worker's own periodic
// heartbeats go on meanwhile. An error says the heartbeat was not delivered
// (the details are sent again with the next periodic one); a heartbeat that
// finds the claim lost or the run cancelled also ends ctx.
func Heartbeat(ctx context.Context, details any) error {
	b, _ := ctx.Value(beaterKey{}).(*beater)
	if b == nil {
		return ErrNoActivity
	}
	var v *structpb.Value
	if details != nil {
		raw, err := json.Marshal(details)
		if err != nil {
			return fmt.Errorf("worker: heartbeat details: %w", err)
		}
		if v, err = valueOf(raw); err != nil {
			return fmt.Errorf("worker: heartbeat details: %w", err)
		}
	}
	return b.beat(ctx, v)
}

// HeartbeatDetails decodes into v the details of the last heartbeat an
// earlier engine attempt of the activity running in ctx sent; false when
// there are none (a first attempt, or none sent any).
func HeartbeatDetails(ctx context.Context, v any) (bool, error) {
	raw := Info(ctx).HeartbeatDetails
	if len(raw) == 0 {
		return false, nil
	}
	return true, json.Unmarshal(raw, v)
}

type beaterKey struct{}

// beater sends one task's heartbeats: the worker's periodic ones and the
// activity's own (Heartbeat), with the details not yet delivered.
type beater struct {
	w      *Worker
	t      *weftv1.Task
	log    *slog.Logger
	cancel context.CancelCauseFunc

	mu      sync.Mutex
	pending *structpb.Value // details not yet delivered
}

// beat sends a heartbeat, with details when not nil (else with any still
// pending), and ends the task when weftd asks or the claim is gone.
func (b *beater) beat(ctx context.Context, details *structpb.Value) error {
	b.mu.Lock()
	if details != nil {
		b.pending = details
	}
	sent := b.pending
	b.mu.Unlock()
	res, err := b.w.c.HeartbeatTask(ctx, &weftv1.HeartbeatTaskRequest{TaskToken: b.t.GetTaskToken(), WorkerId: b.w.opts.WorkerID, Details: sent})
	switch {
	case client.IsCode(err, client.CodeTaskClaimLost), client.IsCode(err, client.CodeNotFound):
		b.log.Info("claim lost; stopping the task")
		b.cancel(errClaimLost)
	case err != nil:
		b.log.Warn("heartbeat failed", slog.String("code", client.CodeOf(err)))
	case res.GetCancelRequested():
		b.log.Info("cancel requested; stopping the task")
		b.cancel(errCancelRequested)
	default:
		b.mu.Lock()
		if b.pending == sent {
			b.pending = nil
		}
		b.mu.Unlock()
	}
	return err
}

// heartbeat makes the task's beater, reachable from ctx through Heartbeat,
// and sends the periodic heartbeats until the answered stop function is
// called: every heartbeat_timeout/3 when the task has a heartbeat timeout
// (or Options.HeartbeatInterval when shorter), else every
// Options.HeartbeatInterval.
func (w *Worker) heartbeat(ctx context.Context, log *slog.Logger, t *weftv1.Task, cancel context.CancelCauseFunc) (context.Context, func()) {
	b := &beater{w: w, t: t, log: log, cancel: cancel}
	ctx = context.WithValue(ctx, beaterKey{}, b)
	every := w.opts.HeartbeatInterval
	if hb := time.Duration(t.GetHeartbeatTimeoutMs()) * time.Millisecond; hb > 0 {
		every = hb / 3
		if w.opts.HeartbeatInterval > 0 {
			every = min(every, w.opts.HeartbeatInterval)
		}
	}
	if every <= 0 {
		return ctx, func() {}
	}
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		tick := time.NewTicker(every)
		defer tick.Stop()
		for {
			select {
			case <-stop:
				return
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			_ = b.beat(ctx, nil) // a failed heartbeat is not retried: the next one is the retry
			if ctx.Err() != nil {
				return // weftd asked to stop, or the claim is gone
			}
		}
	}()
	return ctx, func() { close(stop); <-done }
}
