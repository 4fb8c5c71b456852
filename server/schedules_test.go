package server

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/schedule"
	"github.com/weft-dev/weft/store/memstore"
)

// scheduleServer serves the run and schedule services over one engine and
// scheduler on a memstore.
func scheduleServer(t *testing.T) string {
	t.Helper()
	st := memstore.New(memstore.Config{})
	t.Cleanup(func() { _ = st.Close() })
	eng, err := engine.New(engine.Config{Store: st})
	require.NoError(t, err)
	sch, err := schedule.New(schedule.Config{Store: st, Runs: eng})
	require.NoError(t, err)
	return testServer(t, Config{}.WithEngine(eng).WithSchedules(sch))
}

func scheduleDefinition() *weftv1.WorkflowDefinition {
	return &weftv1.WorkflowDefinition{PlanId: "nightly", PlanVersion: "1", Actions: []*weftv1.Action{
		{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}},
	}}
}

// TestScheduleService_EveryRPCWorksOnEveryProtocol creates, reads, lists,
// pauses, resumes, triggers, backfills and deletes a schedule over Connect
// (JSON and binary), gRPC and gRPC-Web.
func TestScheduleService_EveryRPCWorksOnEveryProtocol(t *testing.T) {
	t.Parallel()
	url := scheduleServer(t)
	ctx := context.Background()
	for _, p := range apitest.Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := weftv1connect.NewScheduleServiceClient(apitest.HTTPClient(), url, p.Options...)
			id := "nightly-" + p.Name[:4]
			created, err := c.CreateSchedule(ctx, connect.NewRequest(&weftv1.CreateScheduleRequest{ScheduleId: id,
				Spec: &weftv1.ScheduleSpec{Trigger: &weftv1.ScheduleSpec_Cron{Cron: "0 2 * * *"}, TimeZone: "Europe/Berlin",
					OverlapPolicy: weftv1.OverlapPolicy_OVERLAP_POLICY_BUFFER_ONE},
				Definition: scheduleDefinition()}))
			require.NoError(t, err)
			s := created.Msg.GetSchedule()
			require.Equal(t, "0 2 * * *", s.GetSpec().GetCron())
			require.Equal(t, weftv1.OverlapPolicy_OVERLAP_POLICY_BUFFER_ONE, s.GetSpec().GetOverlapPolicy())
			require.EqualValues(t, 60000, s.GetSpec().GetCatchupWindowMs(), "the default catch-up window is shown")
			require.Len(t, s.GetNextFireTimes(), schedule.DefaultNextFires)
			for _, ts := range s.GetNextFireTimes() {
				require.Equal(t, 2, ts.AsTime().In(mustZone(t, "Europe/Berlin")).Hour())
			}
			got, err := c.GetSchedule(ctx, connect.NewRequest(&weftv1.GetScheduleRequest{ScheduleId: id, NextFireCount: 12}))
			require.NoError(t, err)
			require.Len(t, got.Msg.GetSchedule().GetNextFireTimes(), 12)
			paused, err := c.PauseSchedule(ctx, connect.NewRequest(&weftv1.PauseScheduleRequest{ScheduleId: id}))
			require.NoError(t, err)
			require.True(t, paused.Msg.GetSchedule().GetPaused())
			trig, err := c.TriggerSchedule(ctx, connect.NewRequest(&weftv1.TriggerScheduleRequest{ScheduleId: id}))
			require.NoError(t, err)
			require.Equal(t, "manual", trig.Msg.GetRun().GetTriggerSource())
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_BLOCKED, trig.Msg.GetRun().GetStatus())
			for range 2 {
				again, err := c.TriggerSchedule(ctx, connect.NewRequest(&weftv1.TriggerScheduleRequest{ScheduleId: id, RequestId: "deploy-7"}))
				require.NoError(t, err)
				require.Equal(t, "schedule:"+id+":manual:deploy-7", again.Msg.GetRun().GetRunRequestId())
			}
			tz := "Asia/Tokyo"
			updated, err := c.UpdateSchedule(ctx, connect.NewRequest(&weftv1.UpdateScheduleRequest{ScheduleId: id,
				Spec: &weftv1.ScheduleSpecChange{TimeZone: &tz}, Input: structpb.NewStringValue("v2")}))
			require.NoError(t, err)
			us := updated.Msg.GetSchedule()
			require.Equal(t, "0 2 * * *", us.GetSpec().GetCron(), "what the change leaves unset stays")
			require.Equal(t, weftv1.OverlapPolicy_OVERLAP_POLICY_BUFFER_ONE, us.GetSpec().GetOverlapPolicy())
			require.Equal(t, "Asia/Tokyo", us.GetSpec().GetTimeZone())
			require.Equal(t, "v2", us.GetInput().GetStringValue())
			require.EqualValues(t, 2, us.GetFires(), "the retried trigger counted once")
			require.Equal(t, 2, us.GetNextFireTimes()[0].AsTime().In(mustZone(t, "Asia/Tokyo")).Hour())
			resumed, err := c.ResumeSchedule(ctx, connect.NewRequest(&weftv1.ResumeScheduleRequest{ScheduleId: id}))
			require.NoError(t, err)
			require.False(t, resumed.Msg.GetSchedule().GetPaused())
			require.NotEmpty(t, resumed.Msg.GetSchedule().GetLastRunId())
			end := time.Date(2026, 1, 4, 0, 0, 0, 0, time.UTC)
			bf, err := c.BackfillSchedule(ctx, connect.NewRequest(&weftv1.BackfillScheduleRequest{ScheduleId: id,
				StartTime: timestamppb.New(end.Add(-72 * time.Hour)), EndTime: timestamppb.New(end)}))
			require.NoError(t, err)
			require.Len(t, bf.Msg.GetFireTimes(), 3)
			list, err := c.ListSchedules(ctx, connect.NewRequest(&weftv1.ListSchedulesRequest{}))
			require.NoError(t, err)
			require.NotEmpty(t, list.Msg.GetSchedules())
			_, err = c.DeleteSchedule(ctx, connect.NewRequest(&weftv1.DeleteScheduleRequest{ScheduleId: id}))
			require.NoError(t, err)
			_, err = c.GetSchedule(ctx, connect.NewRequest(&weftv1.GetScheduleRequest{ScheduleId: id}))
			require.Equal(t, connect.CodeNotFound, connect.CodeOf(err))
		})
	}
}

func mustZone(t *testing.T, name string) *time.Location {
	loc, err := time.LoadLocation(name)
	require.NoError(t, err)
	return loc
}

// TestScheduleService_BadSpecsAreInvalidArgumentNamingTheField: the proto's
// rules and the scheduler's own (cron syntax, time zone) both answer 400
// with the field's proto name, never a 5xx.
func TestScheduleService_BadSpecsAreInvalidArgumentNamingTheField(t *testing.T) {
	t.Parallel()
	url := scheduleServer(t)
	cases := []struct {
		name, body, field string
	}{
		{"no trigger", `{"schedule_id":"s","spec":{},"definition":` + defJSON + `}`, "spec"},
		{"interval too short", `{"schedule_id":"s","spec":{"interval_ms":"10"},"definition":` + defJSON + `}`, "spec.interval_ms"},
		{"bad cron", `{"schedule_id":"s","spec":{"cron":"61 * * * *"},"definition":` + defJSON + `}`, "spec.cron"},
		{"bad time zone", `{"schedule_id":"s","spec":{"cron":"0 * * * *","time_zone":"Nowhere/Town"},"definition":` + defJSON + `}`, "spec.time_zone"},
		{"bad id", `{"schedule_id":"-s","spec":{"cron":"0 * * * *"},"definition":` + defJSON + `}`, "schedule_id"},
		{"bad definition", `{"schedule_id":"s","spec":{"cron":"0 * * * *"},"definition":{"plan_id":"p","plan_version":"1","actions":[{"id":"a","order":2,"activity":"x"}]}}`, "definition.actions"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			status, body := postRaw(t, url+"/weft.v1.ScheduleService/CreateSchedule", c.body)
			require.Equal(t, http.StatusBadRequest, status, "%s", body)
			require.Contains(t, body, c.field)
			require.Contains(t, body, "invalid_argument")
		})
	}
}

// TestScheduleService_BadUpdatesAreInvalidArgumentNamingTheField: an update
// is refused with 400 naming the field, by the proto's rules or the
// scheduler's, and changes nothing.
func TestScheduleService_BadUpdatesAreInvalidArgumentNamingTheField(t *testing.T) {
	t.Parallel()
	url := scheduleServer(t)
	status, body := postRaw(t, url+"/weft.v1.ScheduleService/CreateSchedule",
		`{"schedule_id":"s","spec":{"cron":"0 * * * *"},"definition":`+defJSON+`}`)
	require.Equal(t, http.StatusOK, status, body)
	cases := []struct {
		name, body, field, rule string
	}{
		{"nothing to change", `{"schedule_id":"s"}`, "spec", "update.changes"},
		{"interval too short", `{"schedule_id":"s","spec":{"interval_ms":"10"}}`, "spec.interval_ms", "uint64.gte"},
		{"bad cron", `{"schedule_id":"s","spec":{"cron":"61 * * * *"}}`, "spec.cron", "cron.standard"},
		{"bad time zone", `{"schedule_id":"s","spec":{"time_zone":"Nowhere/Town"}}`, "spec.time_zone", "time_zone.iana"},
		{"unknown overlap policy", `{"schedule_id":"s","spec":{"overlap_policy":9}}`, "spec.overlap_policy", "enum.defined_only"},
		{"bad definition", `{"schedule_id":"s","definition":{"plan_id":"p","plan_version":"1","actions":[{"id":"a","order":2,"activity":"x"}]}}`, "definition.actions", ""},
		{"bad trigger request id", `{"schedule_id":"s","request_id":"-x"}`, "request_id", "string.pattern"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			rpc := "UpdateSchedule"
			if c.field == "request_id" {
				rpc = "TriggerSchedule"
			}
			status, body := postRaw(t, url+"/weft.v1.ScheduleService/"+rpc, c.body)
			require.Equal(t, http.StatusBadRequest, status, "%s", body)
			require.Contains(t, body, c.field)
			require.Contains(t, body, c.rule)
			require.Contains(t, body, "invalid_argument")
		})
	}
	status, body = postRaw(t, url+"/weft.v1.ScheduleService/GetSchedule", `{"schedule_id":"s"}`)
	require.Equal(t, http.StatusOK, status, body)
	require.Contains(t, body, `"cron":"0 * * * *"`, "the refused updates changed nothing")
	require.NotContains(t, body, "time_zone")
	status, body = postRaw(t, url+"/weft.v1.ScheduleService/UpdateSchedule", `{"schedule_id":"missing","spec":{"cron":"@daily"}}`)
	require.Equal(t, http.StatusNotFound, status, body)
}

const defJSON = `{"plan_id":"nightly","plan_version":"1","actions":[{"id":"wait","order":1,"wait_for_signal":{"signal_name":"go"}}]}`

// TestScheduleService_IsServedOverJSONRPC: the service is one of the
// JSON-RPC methods, with proto field names in the answer.
func TestScheduleService_IsServedOverJSONRPC(t *testing.T) {
	t.Parallel()
	url := scheduleServer(t)
	status, body := postRaw(t, url+JSONRPCPath, `{"jsonrpc":"2.0","id":1,"method":"weft.v1.ScheduleService/CreateSchedule",`+
		`"params":{"schedule_id":"hourly","spec":{"interval_ms":"3600000"},"definition":`+defJSON+`}}`)
	require.Equal(t, http.StatusOK, status, body)
	var res struct {
		Result struct {
			Schedule map[string]any `json:"schedule"`
		} `json:"result"`
	}
	require.NoError(t, json.Unmarshal([]byte(body), &res))
	require.Equal(t, "hourly", res.Result.Schedule["schedule_id"])
	require.Contains(t, res.Result.Schedule, "next_fire_times")
}

// postRaw posts a JSON body and answers the status and the body.
func postRaw(t *testing.T, url, body string) (int, string) {
	t.Helper()
	res, err := apitest.HTTPClient().Post(url, "application/json", bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res.StatusCode, string(raw)
}
