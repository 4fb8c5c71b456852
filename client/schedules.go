package client

import (
	"context"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// CreateSchedule stores a schedule. It is not retried: a retry after a lost
// answer would meet the schedule it created as a conflict.
func (c *Client) CreateSchedule(ctx context.Context, req *weftv1.CreateScheduleRequest) (*weftv1.Schedule, error) {
	res, err := unary(ctx, c, false, req, c.sched.CreateSchedule)
	return res.GetSchedule(), err
}

// GetSchedule answers a schedule with its next nextFires fire times (0: 5).
func (c *Client) GetSchedule(ctx context.Context, scheduleID string, nextFires uint32) (*weftv1.Schedule, error) {
	res, err := unary(ctx, c, true, &weftv1.GetScheduleRequest{ScheduleId: scheduleID, NextFireCount: nextFires}, c.sched.GetSchedule)
	return res.GetSchedule(), err
}

// ListSchedules answers one page of schedules, by id.
func (c *Client) ListSchedules(ctx context.Context, req *weftv1.ListSchedulesRequest) (*weftv1.ListSchedulesResponse, error) {
	return unary(ctx, c, true, req, c.sched.ListSchedules)
}

// PauseSchedule pauses a schedule (idempotent, so retried).
func (c *Client) PauseSchedule(ctx context.Context, scheduleID string) (*weftv1.Schedule, error) {
	res, err := unary(ctx, c, true, &weftv1.PauseScheduleRequest{ScheduleId: scheduleID}, c.sched.PauseSchedule)
	return res.GetSchedule(), err
}

// ResumeSchedule resumes a schedule (idempotent, so retried).
func (c *Client) ResumeSchedule(ctx context.Context, scheduleID string) (*weftv1.Schedule, error) {
	res, err := unary(ctx, c, true, &weftv1.ResumeScheduleRequest{ScheduleId: scheduleID}, c.sched.ResumeSchedule)
	return res.GetSchedule(), err
}

// TriggerSchedule starts one run of a schedule now. With a requestID every
// call with it starts or answers one run, so it is retried; without one it
// is not: a retry would be a second trigger.
func (c *Client) TriggerSchedule(ctx context.Context, scheduleID, requestID string) (*weftv1.Run, error) {
	res, err := unary(ctx, c, requestID != "", &weftv1.TriggerScheduleRequest{ScheduleId: scheduleID, RequestId: requestID},
		c.sched.TriggerSchedule)
	return res.GetRun(), err
}

// UpdateSchedule changes a schedule's spec, definition or input. A retry
// after a lost answer makes the same change again, so it is retried.
func (c *Client) UpdateSchedule(ctx context.Context, req *weftv1.UpdateScheduleRequest) (*weftv1.Schedule, error) {
	res, err := unary(ctx, c, true, req, c.sched.UpdateSchedule)
	return res.GetSchedule(), err
}

// BackfillSchedule fires every nominal time in a past range once; a retry
// finds the runs already started, so it is retried.
func (c *Client) BackfillSchedule(ctx context.Context, req *weftv1.BackfillScheduleRequest) (*weftv1.BackfillScheduleResponse, error) {
	return unary(ctx, c, true, req, c.sched.BackfillSchedule)
}

// DeleteSchedule removes a schedule. It is not retried: a retry after a lost
// answer would be not found.
func (c *Client) DeleteSchedule(ctx context.Context, scheduleID string) error {
	_, err := unary(ctx, c, false, &weftv1.DeleteScheduleRequest{ScheduleId: scheduleID}, c.sched.DeleteSchedule)
	return err
}
