package server

import (
	"context"
	"time"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// DefaultWatchInterval is how often WatchEvents looks for new events once
// it has caught up.
const DefaultWatchInterval = 150 * time.Millisecond

// eventPage is how many events one engine read fetches while streaming or resyncing.
const eventPage = 1000

// EventService serves weft.v1.EventService over an engine.
type EventService struct {
	eng      *engine.Engine
	interval time.Duration
}

var _ weftv1connect.EventServiceHandler = (*EventService)(nil)

// NewEventService answers the EventService handler over eng; once caught up,
// WatchEvents sends what this weftd appends at once, and looks for what other
// weftd processes append every DefaultWatchInterval.
func NewEventService(eng *engine.Engine) *EventService {
	return &EventService{eng: eng, interval: DefaultWatchInterval}
}

// ListEvents pages a run's events in run_seq order after a watermark.
func (s *EventService) ListEvents(ctx context.Context, req *connect.Request[weftv1.ListEventsRequest]) (*connect.Response[weftv1.ListEventsResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	res, err := s.eng.ListEvents(ctx, engine.ListEventsParams{TenantID: who.tenant, RunID: m.GetRunId(), AfterSeq: m.GetAfterSeq(), PageSize: int(m.GetPageSize())})
	if err != nil {
		return nil, err
	}
	out := &weftv1.ListEventsResponse{LastEventSeq: res.LastEventSeq, HasMore: res.HasMore}
	for i := range res.Events {
		out.Events = append(out.Events, eventpb.Event(&res.Events[i]))
	}
	return connect.NewResponse(out), nil
}

// WatchEvents streams a run's events after after_seq, then each new one as
// it is appended. It ends when the caller leaves, or once the run is
// terminal and every event up to its last was sent.
func (s *EventService) WatchEvents(ctx context.Context, req *connect.Request[weftv1.WatchEventsRequest], stream *connect.ServerStream[weftv1.WatchEventsResponse]) error {
	who, err := callerOf(ctx)
	if err != nil {
		return err
	}
	w := &watch{eng: s.eng, tenant: who.tenant, runID: req.Msg.GetRunId(), after: req.Msg.GetAfterSeq(), stream: stream}
	for {
		if done, err := w.round(ctx, s.interval); done {
			return err
		}
	}
}

// round sends what the log holds past w.after, then waits for this weftd's
// next append or the interval. It answers whether the watch is over: the
// caller left, or the run is terminal and everything was sent.
func (w *watch) round(ctx context.Context, interval time.Duration) (bool, error) {
	appended, release := w.eng.Wakes().EventsAppended(w.runID) // before reading, so no append is missed
	defer release()
	done, err := w.step(ctx)
	if ctx.Err() != nil {
		return true, nil // the caller left
	}
	if err != nil || done {
		return true, err
	}
	t := time.NewTimer(interval)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return true, nil
	case <-appended: // this weftd appended: send at once
	case <-t.C: // another weftd may have appended
	}
	return false, nil
}

// watch is one WatchEvents call's progress.
type watch struct {
	eng    *engine.Engine
	tenant string
	runID  string
	after  uint64
	stream *connect.ServerStream[weftv1.WatchEventsResponse]
}

// step sends every event appended since the watermark and reports whether
// the watch is over (the run is terminal and nothing is left to send).
func (w *watch) step(ctx context.Context) (bool, error) {
	// Read the status first: a terminal run appends nothing that a watcher
	// must wait for, so once its events up to here are sent the watch ends.
	snap, err := w.eng.GetRun(ctx, engine.GetRunParams{TenantID: w.tenant, RunID: w.runID})
	if err != nil {
		return false, err
	}
	for {
		res, err := w.eng.ListEvents(ctx, engine.ListEventsParams{TenantID: w.tenant, RunID: w.runID, AfterSeq: w.after, PageSize: eventPage})
		if err != nil {
			return false, err
		}
		for i := range res.Events {
			if err := w.stream.Send(&weftv1.WatchEventsResponse{Event: eventpb.Event(&res.Events[i])}); err != nil {
				return false, err
			}
			w.after = res.Events[i].Seq
		}
		if !res.HasMore || len(res.Events) == 0 {
			return snap.Status.Terminal() && w.after >= snap.LastEventSeq, nil
		}
	}
}

// ResyncRun answers what a projector needs to rebuild: FULL gives every
// event; FROM_SNAPSHOT gives a snapshot at or before snapshot_seq and the
// events after it, or falls back to FULL when there is no such snapshot
// (docs/semantics.md#resync).
func (s *EventService) ResyncRun(ctx context.Context, req *connect.Request[weftv1.ResyncRunRequest]) (*connect.Response[weftv1.ResyncRunResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	m := req.Msg
	out := &weftv1.ResyncRunResponse{Mode: weftv1.ResyncMode_RESYNC_MODE_FULL}
	after := uint64(0)
	if m.GetMode() == weftv1.ResyncMode_RESYNC_MODE_FROM_SNAPSHOT {
		base, err := s.eng.SnapshotAt(ctx, engine.SnapshotAtParams{TenantID: who.tenant, RunID: m.GetRunId(), Seq: m.GetSnapshotSeq()})
		if err != nil {
			return nil, err
		}
		if base != nil {
			out.Mode, out.Snapshot, after = m.GetMode(), runProto(base), base.LastEventSeq
		}
	}
	snap, err := s.eng.GetRun(ctx, engine.GetRunParams{TenantID: who.tenant, RunID: m.GetRunId()}) // after the base: never older than it
	if err != nil {
		return nil, err
	}
	out.LastEventSeq = snap.LastEventSeq
	if out.Events, err = s.eventsBetween(ctx, who.tenant, m.GetRunId(), after, snap.LastEventSeq); err != nil {
		return nil, err
	}
	return connect.NewResponse(out), nil
}

// eventsBetween pages through a run's events with after < run_seq <= upTo.
func (s *EventService) eventsBetween(ctx context.Context, tenant, runID string, after, upTo uint64) ([]*weftv1.Event, error) {
	var out []*weftv1.Event
	for after < upTo {
		res, err := s.eng.ListEvents(ctx, engine.ListEventsParams{TenantID: tenant, RunID: runID, AfterSeq: after, PageSize: eventPage})
		if err != nil {
			return nil, err
		}
		for i := range res.Events {
			if res.Events[i].Seq > upTo {
				return out, nil
			}
			out = append(out, eventpb.Event(&res.Events[i]))
			after = res.Events[i].Seq
		}
		if !res.HasMore || len(res.Events) == 0 {
			break
		}
	}
	return out, nil
}
