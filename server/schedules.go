package server

import (
	"context"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/schedule"
)

// ScheduleService serves weft.v1.ScheduleService over a scheduler: it
// converts each request, calls the scheduler once, and converts the answer or
// the fault.
type ScheduleService struct {
	sch *schedule.Scheduler
}

var _ weftv1connect.ScheduleServiceHandler = (*ScheduleService)(nil)

// NewScheduleService answers the ScheduleService handler over sch.
func NewScheduleService(sch *schedule.Scheduler) *ScheduleService { return &ScheduleService{sch: sch} }

// CreateSchedule stores a new schedule.
func (s *ScheduleService) CreateSchedule(ctx context.Context, req *connect.Request[weftv1.CreateScheduleRequest]) (*connect.Response[weftv1.CreateScheduleResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	p, err := createParamsOf(req.Msg, who)
	if err != nil {
		return nil, engineFault(err)
	}
	v, err := s.sch.Create(ctx, p)
	if err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.CreateScheduleResponse{Schedule: scheduleProto(v)}), nil
}

// createParamsOf converts a new schedule.
func createParamsOf(m *weftv1.CreateScheduleRequest, who caller) (schedule.CreateParams, error) {
	def, err := definitionOf(m.GetDefinition(), "definition")
	if err != nil {
		return schedule.CreateParams{}, err
	}
	input, err := jsonField(m.GetInput(), "input")
	if err != nil {
		return schedule.CreateParams{}, err
	}
	return schedule.CreateParams{TenantID: who.tenant, ScheduleID: m.GetScheduleId(), Spec: specOf(m.GetSpec()),
		Definition: def, Input: input, ProjectID: m.GetProjectId(), EnvironmentID: m.GetEnvironmentId(),
		Paused: m.GetPaused(), CreatedBy: who.principal}, nil
}

// GetSchedule answers a schedule and its next fire times.
func (s *ScheduleService) GetSchedule(ctx context.Context, req *connect.Request[weftv1.GetScheduleRequest]) (*connect.Response[weftv1.GetScheduleResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	n := int(req.Msg.GetNextFireCount())
	if n == 0 {
		n = schedule.DefaultNextFires
	}
	v, err := s.sch.Get(ctx, who.tenant, req.Msg.GetScheduleId(), n)
	if err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.GetScheduleResponse{Schedule: scheduleProto(v)}), nil
}

// ListSchedules pages through the caller's schedules.
func (s *ScheduleService) ListSchedules(ctx context.Context, req *connect.Request[weftv1.ListSchedulesRequest]) (*connect.Response[weftv1.ListSchedulesResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	res, err := s.sch.List(ctx, who.tenant, int(req.Msg.GetPageSize()), req.Msg.GetPageToken())
	if err != nil {
		return nil, engineFault(err)
	}
	out := &weftv1.ListSchedulesResponse{NextPageToken: res.NextPageToken}
	for _, v := range res.Schedules {
		out.Schedules = append(out.Schedules, scheduleProto(v))
	}
	return connect.NewResponse(out), nil
}

// PauseSchedule stops a schedule's fires.
func (s *ScheduleService) PauseSchedule(ctx context.Context, req *connect.Request[weftv1.PauseScheduleRequest]) (*connect.Response[weftv1.PauseScheduleResponse], error) {
	v, err := s.steer(ctx, req.Msg.GetScheduleId(), s.sch.Pause)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.PauseScheduleResponse{Schedule: v}), nil
}

// ResumeSchedule resumes a paused schedule.
func (s *ScheduleService) ResumeSchedule(ctx context.Context, req *connect.Request[weftv1.ResumeScheduleRequest]) (*connect.Response[weftv1.ResumeScheduleResponse], error) {
	v, err := s.steer(ctx, req.Msg.GetScheduleId(), s.sch.Resume)
	if err != nil {
		return nil, err
	}
	return connect.NewResponse(&weftv1.ResumeScheduleResponse{Schedule: v}), nil
}

// steer calls pause or resume as the caller's tenant.
func (s *ScheduleService) steer(ctx context.Context, id string,
	call func(context.Context, string, string) (*schedule.View, error)) (*weftv1.Schedule, error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	v, err := call(ctx, who.tenant, id)
	if err != nil {
		return nil, engineFault(err)
	}
	return scheduleProto(v), nil
}

// TriggerSchedule starts one run now.
func (s *ScheduleService) TriggerSchedule(ctx context.Context, req *connect.Request[weftv1.TriggerScheduleRequest]) (*connect.Response[weftv1.TriggerScheduleResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	snap, err := s.sch.Trigger(ctx, schedule.TriggerParams{TenantID: who.tenant, ScheduleID: req.Msg.GetScheduleId(),
		RequestID: req.Msg.GetRequestId()})
	if err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.TriggerScheduleResponse{Run: runProto(snap)}), nil
}

// UpdateSchedule changes a schedule's spec, definition or input.
func (s *ScheduleService) UpdateSchedule(ctx context.Context, req *connect.Request[weftv1.UpdateScheduleRequest]) (*connect.Response[weftv1.UpdateScheduleResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	p, err := updateParamsOf(req.Msg, who)
	if err != nil {
		return nil, engineFault(err)
	}
	v, err := s.sch.Update(ctx, p)
	if err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.UpdateScheduleResponse{Schedule: scheduleProto(v)}), nil
}

// updateParamsOf converts a schedule's change; what the request leaves
// unset stays nil.
func updateParamsOf(m *weftv1.UpdateScheduleRequest, who caller) (schedule.UpdateParams, error) {
	p := schedule.UpdateParams{TenantID: who.tenant, ScheduleID: m.GetScheduleId(), Spec: specChangeOf(m.GetSpec())}
	if m.GetDefinition() != nil {
		def, err := definitionOf(m.GetDefinition(), "definition")
		if err != nil {
			return p, err
		}
		p.Definition = &def
	}
	if m.GetInput() != nil {
		input, err := jsonField(m.GetInput(), "input")
		if err != nil {
			return p, err
		}
		p.Input = input
	}
	return p, nil
}

// specChangeOf converts a spec's change (validation has checked its ranges).
func specChangeOf(m *weftv1.ScheduleSpecChange) schedule.SpecChange {
	var c schedule.SpecChange
	if m == nil {
		return c
	}
	switch t := m.GetTrigger().(type) {
	case *weftv1.ScheduleSpecChange_Cron:
		c.Cron = &t.Cron
	case *weftv1.ScheduleSpecChange_IntervalMs:
		d := time.Duration(t.IntervalMs) * time.Millisecond
		c.Interval = &d
	}
	if m.TimeZone != nil {
		c.TimeZone = m.TimeZone
	}
	if m.OverlapPolicy != nil {
		p := overlapPolicies[*m.OverlapPolicy]
		c.Overlap = &p
	}
	if m.CatchupWindowMs != nil {
		d := time.Duration(*m.CatchupWindowMs) * time.Millisecond
		c.CatchupWindow = &d
	}
	return c
}

// BackfillSchedule fires a past range.
func (s *ScheduleService) BackfillSchedule(ctx context.Context, req *connect.Request[weftv1.BackfillScheduleRequest]) (*connect.Response[weftv1.BackfillScheduleResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	times, err := s.sch.Backfill(ctx, who.tenant, req.Msg.GetScheduleId(), timeOf(req.Msg.GetStartTime()), timeOf(req.Msg.GetEndTime()))
	if err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.BackfillScheduleResponse{FireTimes: timestamps(times)}), nil
}

// DeleteSchedule removes a schedule.
func (s *ScheduleService) DeleteSchedule(ctx context.Context, req *connect.Request[weftv1.DeleteScheduleRequest]) (*connect.Response[weftv1.DeleteScheduleResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, engineFault(err)
	}
	if err := s.sch.Delete(ctx, who.tenant, req.Msg.GetScheduleId()); err != nil {
		return nil, engineFault(err)
	}
	return connect.NewResponse(&weftv1.DeleteScheduleResponse{}), nil
}

// overlapPolicies maps the API's overlap policies onto the scheduler's.
var overlapPolicies = map[weftv1.OverlapPolicy]schedule.OverlapPolicy{
	weftv1.OverlapPolicy_OVERLAP_POLICY_UNSPECIFIED: "",
	weftv1.OverlapPolicy_OVERLAP_POLICY_SKIP:        schedule.OverlapSkip,
	weftv1.OverlapPolicy_OVERLAP_POLICY_BUFFER_ONE:  schedule.OverlapBufferOne,
	weftv1.OverlapPolicy_OVERLAP_POLICY_ALLOW_ALL:   schedule.OverlapAllowAll,
}

// specOf converts a schedule spec (validation has checked its ranges).
func specOf(m *weftv1.ScheduleSpec) schedule.Spec {
	return schedule.Spec{Cron: m.GetCron(), Interval: time.Duration(m.GetIntervalMs()) * time.Millisecond,
		TimeZone: m.GetTimeZone(), Overlap: overlapPolicies[m.GetOverlapPolicy()],
		CatchupWindow: time.Duration(m.GetCatchupWindowMs()) * time.Millisecond}
}

// specProto converts a spec back.
func specProto(s schedule.Spec) *weftv1.ScheduleSpec {
	out := &weftv1.ScheduleSpec{TimeZone: s.TimeZone, CatchupWindowMs: uint64(s.CatchupWindow.Milliseconds())}
	for api, p := range overlapPolicies {
		if p == s.Overlap && p != "" {
			out.OverlapPolicy = api
		}
	}
	if s.Cron != "" {
		out.Trigger = &weftv1.ScheduleSpec_Cron{Cron: s.Cron}
	} else {
		out.Trigger = &weftv1.ScheduleSpec_IntervalMs{IntervalMs: uint64(s.Interval.Milliseconds())}
	}
	return out
}

// scheduleProto converts a schedule's view.
func scheduleProto(v *schedule.View) *weftv1.Schedule {
	return &weftv1.Schedule{
		ScheduleId: v.ScheduleID, Spec: specProto(v.Spec), Definition: definitionProto(v.Definition),
		Input: eventpb.JSONValue(v.Input), ProjectId: v.ProjectID, EnvironmentId: v.EnvironmentID, Paused: v.Paused,
		CreatedBy: v.CreatedBy, CreatedAt: eventpb.Timestamp(v.CreatedAt), LastFireTime: eventpb.Timestamp(v.LastFire),
		LastRunId: v.LastRunID, Fires: v.Fires, Skipped: v.Skipped, Missed: v.Missed, Failed: v.Failed,
		LastError: v.LastError, BufferedFireTime: eventpb.Timestamp(v.Buffered), PendingFires: uint32(v.PendingFires),
		NextFireTimes: timestamps(v.NextFires), LastFireLagMs: uint64(v.LastFireLag.Milliseconds()),
	}
}

// timestamps converts times.
func timestamps(ts []time.Time) []*timestamppb.Timestamp {
	out := make([]*timestamppb.Timestamp, 0, len(ts))
	for _, t := range ts {
		out = append(out, eventpb.Timestamp(t))
	}
	return out
}
