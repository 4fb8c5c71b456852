package main

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// workers lists the caller's queues with their pollers, backlog and oldest
// ready task: `weft workers`.
func (c *cli) workers(args []string) error {
	if _, err := c.parse(c.flags("workers", true), args); err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().ListWorkers(ctx, &weftv1.ListWorkersRequest{})
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	printQueues(c.stdout, res.GetQueues())
	return nil
}

// queue describes one of the caller's queues: `weft queue NAME`.
func (c *cli) queue(args []string) error {
	pos, err := c.parse(c.flags("queue", true), args, "NAME")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().DescribeQueue(ctx, &weftv1.DescribeQueueRequest{Queue: pos[0]})
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	printQueue(c.stdout, res.GetQueue())
	return nil
}

// concurrency lists the caller's run concurrency keys, of one plan or of
// all: `weft concurrency [--plan PLAN]` (docs/semantics.md#run-concurrency).
func (c *cli) concurrency(args []string) error {
	fs := c.flags("concurrency", true)
	plan := fs.String("plan", "", "only this plan's keys")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	req := &weftv1.DescribeRunConcurrencyRequest{PlanId: *plan}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().DescribeRunConcurrency(ctx, req)
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	if len(res.GetKeys()) == 0 {
		fmt.Fprintln(c.stdout, "no run concurrency key has a started or queued run")
		return nil
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "PLAN\tKEY\tSTARTED\tWAITING")
	for _, k := range res.GetKeys() {
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%d\n", k.GetPlanId(), k.GetKey(), k.GetInUse(), k.GetLimit(), k.GetWaiting())
	}
	return tw.Flush()
}

// printQueues prints one line per queue, then one per poller.
func printQueues(w io.Writer, queues []*weftv1.QueueDescription) {
	if len(queues) == 0 {
		fmt.Fprintln(w, "no queue has a poller or a ready task")
		return
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tBACKLOG\tOLDEST READY\tPOLLERS")
	for _, q := range queues {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\n", q.GetQueue(), backlogText(q), ageText(q.GetOldestReadyAgeMs()), len(q.GetPollers()))
	}
	_ = tw.Flush()
	fmt.Fprintln(w)
	printPollers(w, queues)
}

// printQueue prints a queue's summary and its pollers.
func printQueue(w io.Writer, q *weftv1.QueueDescription) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintf(tw, "queue\t%s\n", q.GetQueue())
	fmt.Fprintf(tw, "backlog\t%s\n", backlogText(q))
	oldest := "none"
	if q.GetOldestReadyAt() != nil {
		oldest = fmt.Sprintf("%s (waiting %s)", when(q.GetOldestReadyAt()), ageText(q.GetOldestReadyAgeMs()))
	}
	fmt.Fprintf(tw, "oldest ready\t%s\n", oldest)
	fmt.Fprintf(tw, "pollers\t%d\n", len(q.GetPollers()))
	fmt.Fprintf(tw, "activities run\t%s\n", activitiesText(q))
	_ = tw.Flush()
	if len(q.GetPollers()) > 0 {
		fmt.Fprintln(w)
		printPollers(w, []*weftv1.QueueDescription{q})
	}
	if len(q.GetFlowKeys()) > 0 {
		fmt.Fprintln(w)
		printFlowKeys(w, q.GetFlowKeys())
	}
	if len(q.GetFairnessKeys()) > 0 {
		fmt.Fprintln(w)
		printFairnessKeys(w, q)
	}
}

// printFairnessKeys prints the queue's fairness keys: per priority, each
// key's ready tasks and weight (docs/semantics.md#fairness).
func printFairnessKeys(w io.Writer, q *weftv1.QueueDescription) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FAIRNESS KEY\tPRIORITY\tBACKLOG\tWEIGHT")
	for _, k := range q.GetFairnessKeys() {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%g\n", k.GetKey(), k.GetPriority(), k.GetBacklog(), k.GetWeight())
	}
	if n := q.GetFairnessOther(); n > 0 {
		fmt.Fprintf(tw, "(other keys)\t-\t%d\t-\n", n)
	}
	_ = tw.Flush()
}

// printFlowKeys prints the queue's flow-control keys: a concurrency key's
// slots in use of its limit, a throttle's tokens, rate and next release,
// and each key's waiting tasks.
func printFlowKeys(w io.Writer, keys []*weftv1.FlowKeyState) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FLOW KEY	KIND	SCOPE	WAITING	IN USE	TOKENS	NEXT RELEASE")
	for _, k := range keys {
		inUse, tokens, next := "-", "-", "-"
		switch k.GetKind() {
		case "concurrency":
			inUse = fmt.Sprintf("%d/%d", k.GetInUse(), k.GetLimit())
		case "throttle":
			tokens = fmt.Sprintf("%d/%d (%s)", k.GetTokens(), k.GetBurst(), k.GetRate())
			if k.GetTokens() == 0 {
				next = when(k.GetNextRelease())
			} else {
				next = "now"
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%s\n", k.GetKey(), k.GetKind(), k.GetScope(), k.GetWaiting(), inUse, tokens, next)
	}
	_ = tw.Flush()
}

// printPollers prints a table of the queues' pollers.
func printPollers(w io.Writer, queues []*weftv1.QueueDescription) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "QUEUE\tWORKER\tLAST POLL\tIN FLIGHT\tACTIVITIES")
	for _, q := range queues {
		for _, p := range q.GetPollers() {
			last := when(p.GetLastPollAt())
			if p.GetPolling() {
				last += " (polling)"
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\n", q.GetQueue(), p.GetWorkerId(), last, p.GetInFlightTasks(),
				strings.Join(p.GetActivities(), ","))
		}
	}
	_ = tw.Flush()
}

func backlogText(q *weftv1.QueueDescription) string {
	if q.GetBacklogCapped() {
		return fmt.Sprintf("%d+", q.GetBacklog())
	}
	return fmt.Sprint(q.GetBacklog())
}

// ageText prints an age in milliseconds as a duration to the second.
func ageText(ms uint32) string {
	if ms == 0 {
		return "-"
	}
	return (time.Duration(ms) * time.Millisecond).Round(time.Second).String()
}

// activitiesText lists the activities the queue's pollers run, each once:
// an activity not listed has no worker on this queue.
func activitiesText(q *weftv1.QueueDescription) string {
	seen := map[string]bool{}
	var all []string
	for _, p := range q.GetPollers() {
		for _, a := range p.GetActivities() {
			if !seen[a] {
				seen[a] = true
				all = append(all, a)
			}
		}
	}
	if len(all) == 0 {
		return "none: no poller serves this queue"
	}
	sort.Strings(all)
	return strings.Join(all, ", ")
}
