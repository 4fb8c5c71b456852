package server

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// heldFailure submits a one-step run held on failure and fails its first
// attempt for good, answering the run and the FailTask call's correlation id.
func (b *bundle) heldFailure() (*weftv1.Run, string) {
	b.t.Helper()
	run := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x", OnFailure: weftv1.OnFailure_ON_FAILURE_HOLD}))
	res, err := b.c.Workers.FailTask(context.Background(), connect.NewRequest(&weftv1.FailTaskRequest{
		TaskToken: b.poll("x").GetTaskToken(), WorkerId: "w1", ErrorClass: weftv1.ErrorClass_ERROR_CLASS_VALIDATION, Message: "no"}))
	require.NoError(b.t, err)
	return run, res.Header().Get(CorrelationHeader)
}

func (b *bundle) events(runID string) []*weftv1.Event {
	b.t.Helper()
	res, err := b.c.Events.ListEvents(context.Background(), connect.NewRequest(&weftv1.ListEventsRequest{RunId: runID}))
	require.NoError(b.t, err)
	return res.Msg.GetEvents()
}

func TestStepAttemptRecorded_CarriesTheReportingCallsCorrelationID(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run, failedBy := b.heldFailure()
		_, err := b.c.Runs.RetryStep(context.Background(), connect.NewRequest(&weftv1.RetryStepRequest{RunId: run.GetRunId(), ActionId: "a"}))
		require.NoError(t, err)
		res, err := b.c.Workers.CompleteTask(context.Background(), connect.NewRequest(&weftv1.CompleteTaskRequest{
			TaskToken: b.poll("x").GetTaskToken(), WorkerId: "w1", Output: structpb.NewBoolValue(true)}))
		require.NoError(t, err)
		completedBy := res.Header().Get(CorrelationHeader)
		require.Len(t, failedBy, 36)
		require.Len(t, completedBy, 36)

		var got []string
		for _, ev := range b.events(run.GetRunId()) {
			if a := ev.GetStepAttemptRecorded(); a != nil {
				got = append(got, a.GetCorrelationId())
			}
		}
		require.Equal(t, []string{failedBy, completedBy}, got, "each attempt names the call that reported it")
	})
}

func TestRun_FailedStepsCountsTheStepsThatAreFailed(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run := b.submit(def(&weftv1.Action{Id: "ok", Order: 1, Activity: "x"}))
		b.complete(b.poll("x"))
		require.Zero(t, b.getRun(run.GetRunId()).GetFailedSteps())

		held, _ := b.heldFailure()
		require.Equal(t, uint32(1), b.getRun(held.GetRunId()).GetFailedSteps())
		res, err := b.c.Runs.RetryStep(context.Background(), connect.NewRequest(&weftv1.RetryStepRequest{RunId: held.GetRunId(), ActionId: "a"}))
		require.NoError(t, err)
		require.Zero(t, res.Msg.GetRun().GetFailedSteps(), "RETRY_STEP reopened the step")
	})
}

func TestResyncRun_FromSnapshotAnswersASnapshotAtOrBeforeSnapshotSeqAndTheDeltaAfterIt(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"}))
		b.complete(b.poll("x"))
		all := b.events(run.GetRunId())
		last := all[len(all)-1].GetRunSeq()
		resync := func(seq uint64) *weftv1.ResyncRunResponse {
			res, err := b.c.Events.ResyncRun(context.Background(), connect.NewRequest(&weftv1.ResyncRunRequest{
				RunId: run.GetRunId(), Mode: weftv1.ResyncMode_RESYNC_MODE_FROM_SNAPSHOT, SnapshotSeq: seq}))
			require.NoError(t, err)
			require.Equal(t, last, res.Msg.GetLastEventSeq())
			return res.Msg
		}

		for _, seq := range []uint64{1, 2, 3, last - 1} {
			got := resync(seq)
			require.Equal(t, weftv1.ResyncMode_RESYNC_MODE_FROM_SNAPSHOT, got.GetMode())
			require.LessOrEqual(t, got.GetSnapshot().GetLastEventSeq(), seq, "never a snapshot newer than snapshot_seq")
			require.NotEqual(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, got.GetSnapshot().GetStatus())
			require.Len(t, got.GetEvents(), int(last-got.GetSnapshot().GetLastEventSeq()), "the delta after the snapshot")
			require.Equal(t, got.GetSnapshot().GetLastEventSeq()+1, got.GetEvents()[0].GetRunSeq())
		}
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_QUEUED, resync(2).GetSnapshot().GetStatus(), "RunSubmitted, RunQueued")

		current := resync(last)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, current.GetSnapshot().GetStatus())
		require.Empty(t, current.GetEvents())
	})
}

func TestResyncRun_FromSnapshotFallsBackToFullWhenNoSnapshotIsAtOrBeforeSnapshotSeq(t *testing.T) {
	t.Parallel()
	forEachProtocol(t, func(t *testing.T, b *bundle) {
		run := b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"}))
		b.complete(b.poll("x"))
		res, err := b.c.Events.ResyncRun(context.Background(), connect.NewRequest(&weftv1.ResyncRunRequest{
			RunId: run.GetRunId(), Mode: weftv1.ResyncMode_RESYNC_MODE_FROM_SNAPSHOT, SnapshotSeq: 0}))
		require.NoError(t, err)
		require.Equal(t, weftv1.ResyncMode_RESYNC_MODE_FULL, res.Msg.GetMode(), "the mode served says FULL")
		require.Nil(t, res.Msg.GetSnapshot())
		require.Len(t, res.Msg.GetEvents(), len(b.events(run.GetRunId())))
		require.Equal(t, uint64(1), res.Msg.GetEvents()[0].GetRunSeq())
	})
}
