package server

import (
	"context"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// twoProtocols are Connect (JSON) and gRPC: every rule here holds on both.
var twoProtocols = []apitest.Protocol{apitest.Protocols[0], apitest.Protocols[2]}

// bundle is one test's server and its clients.
type bundle struct {
	t *testing.T
	c apitest.Clients
}

// setup serves a fresh engine-backed server and answers clients speaking p.
func setup(t *testing.T, p apitest.Protocol) *bundle {
	t.Helper()
	return &bundle{t: t, c: apitest.NewClients(testServer(t, engineConfig(t)), p)}
}

// forEachProtocol runs check once per protocol, each on its own server.
func forEachProtocol(t *testing.T, check func(t *testing.T, b *bundle)) {
	for _, p := range twoProtocols {
		t.Run(p.Name, func(t *testing.T) { check(t, setup(t, p)) })
	}
}

func (b *bundle) submit(def *weftv1.WorkflowDefinition, header ...string) *weftv1.Run {
	b.t.Helper()
	req := connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true})
	if len(header) == 2 {
		req.Header().Set(header[0], header[1])
	}
	res, err := b.c.Runs.SubmitRun(context.Background(), req)
	require.NoError(b.t, err)
	return res.Msg.GetRun()
}

func (b *bundle) getRun(runID string) *weftv1.Run {
	b.t.Helper()
	res, err := b.c.Runs.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: runID}))
	require.NoError(b.t, err)
	return res.Msg.GetRun()
}

func (b *bundle) poll(activity string) *weftv1.Task {
	b.t.Helper()
	res, err := b.c.Workers.PollTasks(context.Background(), connect.NewRequest(&weftv1.PollTasksRequest{
		WorkerId: "w1", Activities: []*weftv1.ActivityRegistration{{Name: activity}}, WaitMs: 2000}))
	require.NoError(b.t, err)
	require.Len(b.t, res.Msg.GetTasks(), 1)
	return res.Msg.GetTasks()[0]
}

func (b *bundle) complete(task *weftv1.Task) {
	b.t.Helper()
	_, err := b.c.Workers.CompleteTask(context.Background(), connect.NewRequest(&weftv1.CompleteTaskRequest{
		TaskToken: task.GetTaskToken(), WorkerId: "w1", Output: structpb.NewBoolValue(true)}))
	require.NoError(b.t, err)
}

// def builds a definition of the given actions.
func def(actions ...*weftv1.Action) *weftv1.WorkflowDefinition {
	return &weftv1.WorkflowDefinition{PlanId: "plan", PlanVersion: "1", Actions: actions}
}

func TestResyncRun_FullAndFromSnapshot(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"}))
		b.complete(b.poll("x"))
		last := b.getRun(run.GetRunId()).GetLastEventSeq()

		full, err := b.c.Events.ResyncRun(context.Background(), connect.NewRequest(&weftv1.ResyncRunRequest{
			RunId: run.GetRunId(), Mode: weftv1.ResyncMode_RESYNC_MODE_FULL}))
		require.NoError(t, err)
		require.Nil(t, full.Msg.GetSnapshot())
		require.Equal(t, last, full.Msg.GetLastEventSeq())
		events := full.Msg.GetEvents()
		require.Equal(t, "RunSubmitted", events[0].GetEventType())
		require.Equal(t, last, events[len(events)-1].GetRunSeq())

		mid := events[2].GetRunSeq()
		snap, err := b.c.Events.ResyncRun(context.Background(), connect.NewRequest(&weftv1.ResyncRunRequest{
			RunId: run.GetRunId(), Mode: weftv1.ResyncMode_RESYNC_MODE_FROM_SNAPSHOT, SnapshotSeq: mid}))
		require.NoError(t, err)
		require.Equal(t, mid, snap.Msg.GetSnapshot().GetLastEventSeq(), "the snapshot at snapshot_seq, not a newer one")
		require.Equal(t, weftv1.ResyncMode_RESYNC_MODE_FROM_SNAPSHOT, snap.Msg.GetMode())
		require.Len(t, snap.Msg.GetEvents(), len(events)-3)
		require.Greater(t, snap.Msg.GetEvents()[0].GetRunSeq(), mid)
	})
}

func TestListEvents_PagesInRunSeqOrder(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"}))
		b.complete(b.poll("x"))
		var seqs []uint64
		after := uint64(0)
		for {
			res, err := b.c.Events.ListEvents(context.Background(), connect.NewRequest(&weftv1.ListEventsRequest{
				RunId: run.GetRunId(), AfterSeq: after, PageSize: 2}))
			require.NoError(t, err)
			for _, ev := range res.Msg.GetEvents() {
				seqs = append(seqs, ev.GetRunSeq())
				after = ev.GetRunSeq()
			}
			if !res.Msg.GetHasMore() {
				break
			}
		}
		require.IsIncreasing(t, seqs)
		require.Equal(t, b.getRun(run.GetRunId()).GetLastEventSeq(), seqs[len(seqs)-1])
	})
}

func TestWatchEvents_StreamsEventsAppendedWhileWatching(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"}))
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		stream, err := b.c.Events.WatchEvents(ctx, connect.NewRequest(&weftv1.WatchEventsRequest{RunId: run.GetRunId()}))
		require.NoError(t, err)
		require.True(t, stream.Receive(), "first event: %v", stream.Err())
		require.Equal(t, "RunSubmitted", stream.Msg().GetEvent().GetEventType())
		b.complete(b.poll("x"))
		var types []string
		for stream.Receive() {
			types = append(types, stream.Msg().GetEvent().GetEventType())
		}
		require.NoError(t, stream.Err())
		require.Contains(t, types, "StepCompleted")
		require.Equal(t, "RunCompleted", types[len(types)-1])
	})
}

func TestWatchEvents_UnknownRunIsNotFound(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		stream, err := b.c.Events.WatchEvents(context.Background(), connect.NewRequest(&weftv1.WatchEventsRequest{RunId: "run-nope"}))
		require.NoError(t, err)
		require.False(t, stream.Receive())
		require.Equal(t, connect.CodeNotFound, connect.CodeOf(stream.Err()), "error: %v", stream.Err())
	})
}

func TestManualCompletion_CompletesTheStepOnceAndAnswersDuplicates(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run := b.submit(def(&weftv1.Action{Id: "sign", Order: 1, CompletionMode: weftv1.CompletionMode_COMPLETION_MODE_MANUAL}))
		step := b.getRun(run.GetRunId()).GetSteps()[0]
		require.Equal(t, weftv1.StepStatus_STEP_STATUS_WAITING_FOR_MANUAL_COMPLETION, step.GetStatus())
		require.NotEmpty(t, step.GetCompletionToken())
		req := &weftv1.CompleteManualActionRequest{SchemaVersion: 1, RunId: run.GetRunId(), ActionId: "sign",
			CompletionToken: step.GetCompletionToken(), Outcome: weftv1.ManualOutcome_MANUAL_OUTCOME_SUCCEEDED,
			ActorUserId: "alice", CompletedAt: timestamppb.Now(), Output: structpb.NewStringValue("signed")}
		first, err := b.c.Signals.CompleteManualAction(context.Background(), connect.NewRequest(req))
		require.NoError(t, err)
		second, err := b.c.Signals.CompleteManualAction(context.Background(), connect.NewRequest(req))
		require.NoError(t, err)
		require.False(t, first.Msg.GetDuplicate())
		require.True(t, second.Msg.GetDuplicate())
		require.True(t, proto.Equal(first.Msg.GetResult(), second.Msg.GetResult()))
		got := b.getRun(run.GetRunId())
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, got.GetStatus())
		require.Equal(t, "signed", got.GetSteps()[0].GetOutput().GetStringValue())
	})
}

func TestHeldStep_FailRetryStepAndComplete(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x", OnFailure: weftv1.OnFailure_ON_FAILURE_HOLD,
			Retry: &weftv1.RetryPolicy{MaxAttempts: proto.Uint32(1)}}))
		task := b.poll("x")
		failed, err := b.c.Workers.FailTask(context.Background(), connect.NewRequest(&weftv1.FailTaskRequest{
			TaskToken: task.GetTaskToken(), WorkerId: "w1", ErrorClass: weftv1.ErrorClass_ERROR_CLASS_VALIDATION, Message: "bad"}))
		require.NoError(t, err)
		require.False(t, failed.Msg.GetWillRetry())
		held := b.getRun(run.GetRunId())
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_BLOCKED, held.GetStatus())
		require.Equal(t, weftv1.ErrorClass_ERROR_CLASS_VALIDATION, held.GetSteps()[0].GetError().GetErrorClass())

		retried, err := b.c.Runs.RetryStep(context.Background(), connect.NewRequest(&weftv1.RetryStepRequest{
			RunId: run.GetRunId(), ActionId: "a", SignalId: proto.String("retry-1")}))
		require.NoError(t, err)
		require.Equal(t, "retry-1", retried.Msg.GetResult().GetSignalId())
		require.Equal(t, uint32(2), retried.Msg.GetRun().GetSteps()[0].GetLogicalAttemptId())
		b.complete(b.poll("x"))
		done := b.getRun(run.GetRunId())
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, done.GetStatus())
		require.Len(t, done.GetSteps()[0].GetAttempts(), 2, "the failed attempt stays")
	})
}

func TestPauseResumeAndListRuns(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"}))
		task := b.poll("x")
		paused, err := b.c.Runs.PauseRun(context.Background(), connect.NewRequest(&weftv1.PauseRunRequest{RunId: run.GetRunId()}))
		require.NoError(t, err)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_PAUSED, paused.Msg.GetRun().GetStatus())
		require.Equal(t, weftv1.RunSubstatus_RUN_SUBSTATUS_DRAINING, paused.Msg.GetRun().GetSubstatus())
		b.complete(task)
		resumed, err := b.c.Runs.ResumeRun(context.Background(), connect.NewRequest(&weftv1.ResumeRunRequest{RunId: run.GetRunId()}))
		require.NoError(t, err)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, resumed.Msg.GetRun().GetStatus())

		list, err := b.c.Runs.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{
			Statuses: []weftv1.RunStatus{weftv1.RunStatus_RUN_STATUS_COMPLETED}}))
		require.NoError(t, err)
		require.Len(t, list.Msg.GetRuns(), 1)
		require.Equal(t, run.GetRunId(), list.Msg.GetRuns()[0].GetRunId())
		require.Nil(t, list.Msg.GetRuns()[0].GetDefinition(), "ListRuns leaves definitions out")
	})
}

// TestListRuns_RunIDContainsKeepsOnlyRunsWhoseIDHasTheText: the run id search
// is a filter of ListRuns over all of the tenant's runs.
func TestListRuns_RunIDContainsKeepsOnlyRunsWhoseIDHasTheText(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		first := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"}))
		second := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"}))
		id := second.GetRunId()
		list := func(text string) []string {
			res, err := b.c.Runs.ListRuns(context.Background(), connect.NewRequest(&weftv1.ListRunsRequest{RunIdContains: text}))
			require.NoError(t, err)
			var ids []string
			for _, r := range res.Msg.GetRuns() {
				ids = append(ids, r.GetRunId())
			}
			return ids
		}
		require.Equal(t, []string{id}, list(id[len(id)-12:]), "a part of one run's id finds that run only")
		require.ElementsMatch(t, []string{first.GetRunId(), id}, list(""), "no text: every run")
		require.Empty(t, list("no-run-has-this"))
	})
}

func TestApproval_StartRefusedUntilApproved(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		d := def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})
		d.RequiresApproval = true
		res, err := b.c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{Definition: d}))
		require.NoError(t, err)
		runID := res.Msg.GetRun().GetRunId()
		_, err = b.c.Runs.StartRun(context.Background(), connect.NewRequest(&weftv1.StartRunRequest{RunId: runID}))
		require.Equal(t, connect.CodeAborted, connect.CodeOf(err))
		_, err = b.c.Runs.ApproveRun(context.Background(), connect.NewRequest(&weftv1.ApproveRunRequest{RunId: runID}))
		require.NoError(t, err)
		started, err := b.c.Runs.StartRun(context.Background(), connect.NewRequest(&weftv1.StartRunRequest{RunId: runID}))
		require.NoError(t, err)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_RUNNING, started.Msg.GetRun().GetStatus())
	})
}

func TestHeartbeat_AnswersCancelAfterTheRunIsCancelled(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"}))
		task := b.poll("x")
		hb := func() *weftv1.HeartbeatTaskResponse {
			res, err := b.c.Workers.HeartbeatTask(context.Background(), connect.NewRequest(&weftv1.HeartbeatTaskRequest{
				TaskToken: task.GetTaskToken(), WorkerId: "w1"}))
			require.NoError(t, err)
			return res.Msg
		}
		require.False(t, hb().GetCancelRequested())
		_, err := b.c.Runs.CancelRun(context.Background(), connect.NewRequest(&weftv1.CancelRunRequest{RunId: run.GetRunId()}))
		require.NoError(t, err)
		require.True(t, hb().GetCancelRequested())
	})
}

func TestReportVerification_ReconcilesAPossibleSideEffectWithoutRedispatch(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		ctx := context.Background()
		action := &weftv1.Action{Id: "charge", Order: 1, Activity: "charge",
			Retry: &weftv1.RetryPolicy{InitialBackoffMs: proto.Uint32(1)}}
		run := b.submit(def(action))
		pollVerifiable := func() *weftv1.Task {
			res, err := b.c.Workers.PollTasks(ctx, connect.NewRequest(&weftv1.PollTasksRequest{WorkerId: "vw",
				Activities: []*weftv1.ActivityRegistration{{Name: "charge", Verifiable: true}}, WaitMs: 5000}))
			require.NoError(t, err)
			require.Len(t, res.Msg.GetTasks(), 1)
			return res.Msg.GetTasks()[0]
		}
		task := pollVerifiable()
		require.Equal(t, weftv1.TaskType_TASK_TYPE_ACTIVITY, task.GetTaskType())
		_, err := b.c.Workers.FailTask(ctx, connect.NewRequest(&weftv1.FailTaskRequest{TaskToken: task.GetTaskToken(),
			WorkerId: "vw", ErrorClass: weftv1.ErrorClass_ERROR_CLASS_TRANSPORT, SideEffectPossible: true, ReconciliationKey: "order-9"}))
		require.NoError(t, err)
		verify := pollVerifiable()
		require.Equal(t, weftv1.TaskType_TASK_TYPE_VERIFY, verify.GetTaskType())
		require.Equal(t, "order-9", verify.GetReconciliationKey())
		result, err := structpb.NewValue(map[string]any{"charge": "ch_9"})
		require.NoError(t, err)
		req := &weftv1.ReportVerificationRequest{TaskToken: verify.GetTaskToken(), WorkerId: "vw",
			State: weftv1.VerifyState_VERIFY_STATE_COMPLETED_WITH_RESULT, Result: result}
		first, err := b.c.Workers.ReportVerification(ctx, connect.NewRequest(req))
		require.NoError(t, err)
		require.False(t, first.Msg.GetDuplicate())
		again, err := b.c.Workers.ReportVerification(ctx, connect.NewRequest(req))
		require.NoError(t, err)
		require.True(t, again.Msg.GetDuplicate())
		got := b.getRun(run.GetRunId())
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, got.GetStatus())
		require.Equal(t, "ch_9", got.GetSteps()[0].GetOutput().GetStructValue().GetFields()["charge"].GetStringValue())
	})
}
