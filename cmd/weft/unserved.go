package main

import (
	"context"
	"fmt"
	"slices"
	"sort"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// unservedActivities says, for each SCHEDULED step of the run whose queue
// no poller serves its activity on, that no worker runs it: otherwise a
// missing activity shows only when the schedule-to-start timeout fails the
// attempt, minutes later. It asks DescribeQueue once per queue; a queue it
// cannot describe is left out (this is a hint, not the run's state).
func unservedActivities(ctx context.Context, cl *client.Client, run *weftv1.Run) []string {
	byQueue := map[string][]string{}
	for _, s := range run.GetSteps() {
		if s.GetStatus() != weftv1.StepStatus_STEP_STATUS_SCHEDULED {
			continue
		}
		for _, a := range run.GetDefinition().GetActions() {
			if a.GetId() == s.GetActionId() && a.GetActivity() != "" {
				byQueue[a.GetQueue()] = append(byQueue[a.GetQueue()], a.GetActivity())
			}
		}
	}
	queues := make([]string, 0, len(byQueue))
	for q := range byQueue {
		queues = append(queues, q)
	}
	sort.Strings(queues)
	var out []string
	for _, q := range queues {
		res, err := cl.DescribeQueue(ctx, &weftv1.DescribeQueueRequest{Queue: q})
		if err != nil {
			continue
		}
		for _, activity := range byQueue[q] {
			if !served(res.GetQueue(), activity) {
				out = append(out, fmt.Sprintf("a worker: no poller of queue %s runs activity %s (weft queue %s); "+
					"the attempt fails SCHEDULE_TO_START when its timeout passes", q, activity, q))
			}
		}
	}
	return out
}

// served reports whether a poller of the queue registers the activity.
func served(q *weftv1.QueueDescription, activity string) bool {
	for _, p := range q.GetPollers() {
		if slices.Contains(p.GetActivities(), activity) {
			return true
		}
	}
	return false
}
