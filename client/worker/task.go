package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"runtime/debug"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// maxMessageRunes keeps a failure message inside the API's 4096-character limit.
const maxMessageRunes = 2048

// handle runs one claimed task and reports its outcome on ctx (the worker's
// task context, which ends only when the worker abandons its tasks). A
// completion asks for next (nil: nothing) and answers the tasks eager
// dispatch claimed for the worker with it.
func (w *Worker) handle(ctx context.Context, t *weftv1.Task, next *weftv1.PollTasksRequest) []*weftv1.Task {
	log := w.log.With(slog.String("task_id", t.GetTaskId()), slog.String("run_id", t.GetRunId()),
		slog.String("action_id", t.GetActionId()), slog.String("activity", t.GetActivity()))
	h := w.handlerFor(t)
	if h == nil {
		log.Warn("task of a type or name this worker does not run; failing it back", slog.String("task_type", t.GetTaskType().String()))
		w.fail(ctx, log, t, &Failure{Class: ClassAgentError, Code: "unsupported_task",
			Err: fmt.Errorf("worker %s does not run %s %q", w.opts.WorkerID, t.GetTaskType(), t.GetActivity())}, "")
		return nil
	}
	actCtx, cancel := w.activityContext(ctx, t)
	defer cancel(nil)
	var span *activitySpan
	ctx, actCtx, span = w.startActivitySpan(ctx, actCtx, t)
	defer span.end()
	actCtx, stopHeartbeat := w.heartbeat(actCtx, log, t, cancel)
	defer stopHeartbeat()
	actCtx, attrs := withAttributes(actCtx)
	if t.GetTaskType() == weftv1.TaskType_TASK_TYPE_VERIFY {
		w.runVerify(ctx, actCtx, log, t, h)
		return nil
	}
	out, key, err := runGuarded(actCtx, log, h, t.GetInput())
	cause := context.Cause(actCtx)
	switch {
	case errors.Is(cause, errClaimLost), errors.Is(cause, errAbandoned) && ctx.Err() != nil:
		log.Info("task not reported", slog.Any("reason", cause))
		span.outcome("not_reported", "")
	case err != nil:
		f := classify(err, cause)
		span.outcome("failed", f.class().String())
		w.fail(ctx, log, t, f, key)
	default:
		span.outcome("completed", "")
		return w.complete(ctx, log, t, out, key, attrs.get(), next)
	}
	return nil
}

func (w *Worker) handlerFor(t *weftv1.Task) *handler {
	switch t.GetTaskType() {
	case weftv1.TaskType_TASK_TYPE_ACTIVITY:
		return w.activities[t.GetActivity()]
	case weftv1.TaskType_TASK_TYPE_VERIFY:
		if h := w.activities[t.GetActivity()]; h != nil && h.verify != nil {
			return h
		}
	case weftv1.TaskType_TASK_TYPE_COMPENSATION:
		return w.compensations[t.GetActivity()]
	}
	return nil
}

// activityContext carries the task's Info and ends at its deadline or when
// cancel is called with a cause.
func (w *Worker) activityContext(ctx context.Context, t *weftv1.Task) (context.Context, context.CancelCauseFunc) {
	info := ActivityInfo{TaskType: t.GetTaskType(), TaskID: t.GetTaskId(), RunID: t.GetRunId(), ActionID: t.GetActionId(),
		TenantID: t.GetTenantId(), Activity: t.GetActivity(), OperationID: t.GetOperationId(),
		IdempotencyKey: t.GetIdempotencyKey(), LogicalAttempt: t.GetLogicalAttemptId(), EngineAttempt: t.GetEngineAttemptId(),
		RunInput: jsonOf(t.GetRunInput()), Secrets: t.GetSecrets(), WorkerID: w.opts.WorkerID}
	if t.GetHeartbeatDetails() != nil {
		info.HeartbeatDetails = jsonOf(t.GetHeartbeatDetails())
	}
	if t.GetItem() != nil { // a fan-out's item (docs/semantics.md#for-each)
		info.Item, info.Index, info.IsItem = jsonOf(t.GetItem()), int(t.GetIndex()), true
	}
	if len(t.GetUpstreamOutputs()) > 0 {
		info.UpstreamOutputs = make(map[string]json.RawMessage, len(t.GetUpstreamOutputs()))
		for id, v := range t.GetUpstreamOutputs() {
			info.UpstreamOutputs[id] = jsonOf(v)
		}
	}
	if t.GetDeadline() != nil {
		info.Deadline = t.GetDeadline().AsTime()
	}
	ctx, cancel := context.WithCancelCause(context.WithValue(ctx, infoKey{}, info))
	if info.Deadline.IsZero() {
		return ctx, cancel
	}
	dctx, dcancel := context.WithDeadline(ctx, info.Deadline)
	return dctx, func(cause error) { cancel(cause); dcancel() }
}

// runGuarded runs the handler, turning a panic into an AGENT_ERROR failure.
func runGuarded(ctx context.Context, log *slog.Logger, h *handler, input *structpb.Value) (out []byte, key string, err error) {
	defer func() {
		if r := recover(); r != nil {
			log.Error("activity panicked", slog.Any("panic", r), slog.String("stack", string(debug.Stack())))
			err = &Failure{Class: ClassAgentError, Code: "panic", Err: fmt.Errorf("activity panicked: %v", r)}
		}
	}()
	return h.run(ctx, jsonOf(input))
}

// complete reports a result, asking for next, and answers the tasks eager
// dispatch claimed for the worker.
func (w *Worker) complete(ctx context.Context, log *slog.Logger, t *weftv1.Task, out []byte, key string,
	attrs map[string]*weftv1.SearchAttributeValue, next *weftv1.PollTasksRequest) []*weftv1.Task {
	req := &weftv1.CompleteTaskRequest{TaskToken: t.GetTaskToken(), WorkerId: w.opts.WorkerID, ReconciliationKey: key, NextTasks: next,
		SearchAttributes: attrs}
	if out != nil {
		v, err := valueOf(out)
		if err != nil {
			w.fail(ctx, log, t, &Failure{Class: ClassAgentError, Code: "invalid_output", Err: errors.New("the output is not representable as JSON")}, key)
			return nil
		}
		req.Output = v
	}
	res, err := w.c.CompleteTask(ctx, req)
	switch {
	case err == nil:
		log.Debug("task completed", slog.Int("next_tasks", len(res.GetTasks())))
		return res.GetTasks()
	case client.IsCode(err, client.CodeTaskClaimLost):
		log.Info("completion not applied: the claim was lost")
	case client.IsCode(err, client.CodePayloadTooLarge), client.IsCode(err, client.CodeInvalidArgument):
		log.Warn("completion refused; failing the task", slog.String("code", client.CodeOf(err)))
		w.fail(ctx, log, t, &Failure{Class: ClassAgentError, Code: "output_rejected", Err: err}, key)
	default:
		log.Warn("completion not reported; the claim will time out", slog.String("code", client.CodeOf(err)))
	}
	return nil
}

func (w *Worker) fail(ctx context.Context, log *slog.Logger, t *weftv1.Task, f *Failure, key string) {
	code := f.Code
	if len(code) > 128 {
		code = code[:128]
	}
	res, err := w.c.FailTask(ctx, &weftv1.FailTaskRequest{TaskToken: t.GetTaskToken(), WorkerId: w.opts.WorkerID,
		ErrorClass: f.class(), Code: code, Message: truncate(f.Error(), maxMessageRunes),
		SideEffectPossible: f.SideEffectPossible, ReconciliationKey: key, RetryAfterMs: retryAfterMs(f.RetryAfter)})
	switch {
	case err == nil:
		log.Debug("task failed", slog.String("class", f.class().String()), slog.Bool("will_retry", res.GetWillRetry()))
	case client.IsCode(err, client.CodeTaskClaimLost):
		log.Info("failure not applied: the claim was lost")
	default:
		log.Warn("failure not reported; the claim will time out", slog.String("code", client.CodeOf(err)))
	}
}

// runVerify answers a verify task through the activity's verify function.
func (w *Worker) runVerify(ctx, actCtx context.Context, log *slog.Logger, t *weftv1.Task, h *handler) {
	res, err := callVerify(actCtx, h, t.GetReconciliationKey())
	req := &weftv1.ReportVerificationRequest{TaskToken: t.GetTaskToken(), WorkerId: w.opts.WorkerID,
		State: res.State, Diagnostic: truncate(res.Diagnostic, maxMessageRunes)}
	if err != nil || res.State == weftv1.VerifyState_VERIFY_STATE_UNSPECIFIED {
		req.State = VerifyIndeterminate
		if err != nil {
			req.Diagnostic = truncate("verify failed: "+err.Error(), maxMessageRunes)
		}
	}
	if res.State == VerifyCompletedWithResult && err == nil {
		b, merr := json.Marshal(res.Result)
		v := &structpb.Value{}
		if merr != nil || protojson.Unmarshal(b, v) != nil {
			req.State, req.Diagnostic = VerifyIndeterminate, "verify's result is not representable as JSON"
		} else {
			req.Result = v
		}
	}
	if _, err := w.c.ReportVerification(ctx, req); err != nil {
		log.Warn("verification not reported", slog.String("code", client.CodeOf(err)))
	}
}

func callVerify(ctx context.Context, h *handler, key string) (res VerifyResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("verify panicked: %v", r)
		}
	}()
	return h.verify(ctx, key)
}

func truncate(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
