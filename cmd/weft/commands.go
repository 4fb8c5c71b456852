package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/engine/definition"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// cli is one invocation's context.
type cli struct {
	ctx            context.Context
	g              *globals
	getenv         func(string) string
	stdout, stderr io.Writer
	cmd            *command      // the command (or schedule subcommand) being run
	fs             *flag.FlagSet // its flags, once built: its help lists them
}

// command is one weft subcommand.
type command struct {
	name, args, summary string
	run                 func(c *cli, args []string) error
}

// commands in the order usage lists them.
var commands []command

func init() {
	commands = []command{
		{"health", "", "report whether each weft.v1 service is serving", (*cli).health},
		{"submit", "FILE", "submit a workflow (YAML or JSON, or --plan for a stored one); --start to run it, --wait to await it", (*cli).submit},
		{"await", "RUN", "wait for a run to end and print it; exit 0 when COMPLETED, 1 otherwise", (*cli).await},
		{"start", "RUN", "start a PENDING or APPROVED run", (*cli).start},
		{"approve", "RUN", "approve a run that requires approval", (*cli).approve},
		{"get", "RUN", "show a run, what it waits for, and its steps", (*cli).get},
		{"list", "", "list runs, newest first, with what each waits for (--status, --plan, --query)", (*cli).list},
		{"count", "", "count runs matching a query (--query), in total or per value (--group-by)", (*cli).count},
		{"events", "RUN", "show a run's events (--watch, --after SEQ)", (*cli).events},
		{"signal", "RUN NAME", "send a signal a step waits for (--payload JSON, --signal-id, --any-name)", (*cli).signal},
		{"complete", "RUN ACTION", "complete a manual step (--token, --outcome, --actor)", (*cli).complete},
		{"pause", "RUN", "pause a run", (*cli).pause},
		{"resume", "RUN", "resume a paused run", (*cli).resume},
		{"cancel", "RUN", "cancel a run (--reason, --compensate)", (*cli).cancel},
		{"delete", "RUN", "delete a finished run and all its records", (*cli).deleteRun},
		{"audit", "", "list the audit log, newest first (--principal, --target, --outcome, --since)", (*cli).audit},
		{"retry-step", "RUN ACTION", "retry a failed step the run is held on", (*cli).retryStep},
		{"skip-step", "RUN ACTION", "skip a step", (*cli).skipStep},
		{"rerun", "RUN --from STEP", "rerun an ended run from a step, in the same run (--reason, --signal-id)", (*cli).rerun},
		{"workers", "", "list the queues with their pollers, backlog and oldest ready task", (*cli).workers},
		{"queue", "NAME", "describe a queue: its pollers, backlog and oldest ready task", (*cli).queue},
		{"concurrency", "", "list the run concurrency keys: runs started / limit, runs waiting (--plan)", (*cli).concurrency},
		{"schedule", "SUBCOMMAND", "create|update|list|describe|pause|resume|trigger|backfill|delete schedules", (*cli).schedule},
		{"batch", "SUBCOMMAND", "start|describe|cancel|list batch operations over many runs", (*cli).batch},
		{"definition", "SUBCOMMAND", "put|get|list stored definitions (the definition registry)", (*cli).definition},
	}
}

func commandNamed(name string) *command {
	for i := range commands {
		if commands[i].name == name {
			return &commands[i]
		}
	}
	return nil
}

// flags answers a flag set for a command with the global flags on it.
func (c *cli) flags(name string, all bool) *flag.FlagSet {
	fs := flag.NewFlagSet("weft "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // run prints the problem and the usage line once
	c.g.register(fs, c.getenv, all)
	c.fs = fs
	return fs
}

// parse parses a command's flags and positional arguments and checks the
// output format.
func (c *cli) parse(fs *flag.FlagSet, args []string, names ...string) ([]string, error) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return nil, err
	}
	if err := c.checkGlobals(); err != nil {
		return nil, err
	}
	if err := c.g.tls.load(); err != nil {
		return nil, err
	}
	return pos, wantArgs(pos, names...)
}

// checkGlobals checks the global flags every command takes.
func (c *cli) checkGlobals() error {
	if c.g.output != "table" && c.g.output != "json" {
		return usageError("--output must be table or json, got %q", c.g.output)
	}
	u, err := url.Parse(c.g.addr)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usageError("--addr (or $WEFT_URL) must be a URL starting http:// or https://, e.g. http://127.0.0.1:7400, got %q", c.g.addr)
	}
	return nil
}

func (c *cli) client() *client.Client {
	var opts []client.Option
	if c.g.token != "" {
		opts = append(opts, client.WithToken(c.g.token))
	}
	if c.g.tls.config != nil {
		opts = append(opts, client.WithTLS(c.g.tls.config))
	}
	return client.New(c.g.baseURL(), opts...)
}

// callTimeout bounds every call except watches.
const callTimeout = 30 * time.Second

func (c *cli) callCtx() (context.Context, context.CancelFunc) {
	return context.WithTimeout(c.ctx, callTimeout)
}

var errNotServing = errors.New("not every service is serving")

func (c *cli) health(args []string) error {
	if _, err := c.parse(c.flags("health", true), args); err != nil {
		return err
	}
	code, err := health(c.ctx, c.g.baseURL(), c.g.tls.config, c.stdout, c.g.output == "json")
	if err == nil && code != 0 {
		err = errNotServing
	}
	return err
}

func (c *cli) submit(args []string) error {
	fs := c.flags("submit", true)
	start := fs.Bool("start", false, "start the run right after it is persisted")
	wait := fs.Bool("wait", false, "with --start: wait for the run to end and print it; exit 0 when COMPLETED, 1 otherwise")
	plan := fs.String("plan", "", "run a stored definition of this plan (weft definition put) instead of a FILE")
	version := fs.String("version", "", "with --plan: the stored version (default the plan's latest)")
	requestID := fs.String("run-request-id", "", "makes the submission idempotent")
	project := fs.String("project", "", "project (default \"default\")")
	env := fs.String("env", "", "environment (default \"default\")")
	input := fs.String("input", "", "the run's input, as JSON")
	priority := fs.Uint("priority", 0, "the run's priority, 1 (its tasks handed out first) to 5 (default: the definition's, else 3)")
	quiet := fs.Bool("quiet", false, "print only the run id")
	fs.BoolVar(quiet, "q", false, "print only the run id")
	attrs := attrFlag{}
	fs.Var(attrs, "attr", "a search attribute NAME=VALUE (a keyword) or NAME:TYPE=VALUE, TYPE int, double, bool or time; repeatable")
	pos, err := c.parse(fs, args, submitArgs(args)...)
	if err != nil {
		return err
	}
	if *wait && !*start {
		return usageError("--wait needs --start: a run that is not started never ends")
	}
	if *version != "" && *plan == "" {
		return usageError("--version needs --plan")
	}
	req := &weftv1.SubmitRunRequest{RunRequestId: *requestID, ProjectId: *project, EnvironmentId: *env, SearchAttributes: attrs}
	if *priority != 0 {
		if *priority > 5 {
			return usageError("--priority must be between 1 (first) and 5")
		}
		pr := uint32(*priority)
		req.Priority = &pr
	}
	var paths *definition.PathMap
	if *plan != "" {
		req.DefinitionRef = &weftv1.DefinitionRef{PlanId: *plan, PlanVersion: *version}
	} else if req.Definition, paths, err = loadDefinition(pos[0]); err != nil {
		return err
	}
	// A run that requires approval is persisted, then refused a start: it is
	// submitted without one and started apart, so that its id is printed
	// whatever the start answers. A stored definition's need is known only
	// once the run is: it is started apart too.
	startApart := *start && (req.Definition.GetRequiresApproval() || *plan != "")
	req.Start = *start && !startApart
	if req.Input, err = jsonFlag("--input", *input); err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	cl := c.client()
	res, err := cl.SubmitRun(ctx, req)
	if err != nil {
		return inYAML(err, paths)
	}
	if startApart && startable(res.GetRun()) {
		run, err := cl.StartRun(ctx, res.GetRun().GetRunId())
		if err != nil {
			_ = c.printSubmitted(res, *quiet)
			return notStarted(res.GetRun(), err)
		}
		res.Run = run
	}
	if *wait {
		return c.awaitAndPrint(res.GetRun().GetRunId(), *quiet)
	}
	return c.printSubmitted(res, *quiet)
}

// submitArgs names submit's positional arguments: none with --plan, else
// the workflow FILE.
func submitArgs(args []string) []string {
	for _, a := range args {
		if a == "--plan" || a == "-plan" || strings.HasPrefix(a, "--plan=") || strings.HasPrefix(a, "-plan=") {
			return nil
		}
	}
	return []string{"FILE"}
}

// startable reports whether StartRun may start the run.
func startable(run *weftv1.Run) bool {
	s := run.GetStatus()
	return s == weftv1.RunStatus_RUN_STATUS_PENDING || s == weftv1.RunStatus_RUN_STATUS_APPROVED
}

// notStarted says that a run was created but its start refused, and what
// to do next.
func notStarted(run *weftv1.Run, err error) error {
	id := run.GetRunId()
	next := ""
	if run.GetDefinition().GetRequiresApproval() && run.GetStatus() == weftv1.RunStatus_RUN_STATUS_PENDING {
		next = fmt.Sprintf("; it requires approval: weft approve %s, then weft start %s", id, id)
	}
	return fmt.Errorf("run %s was created %s but not started%s: %w", id,
		enumName(run.GetStatus().String(), "RUN_STATUS_"), next, err)
}

// printSubmitted prints a submission's answer: the run id alone (--quiet),
// the response as JSON, or the run as a table.
func (c *cli) printSubmitted(res *weftv1.SubmitRunResponse, quiet bool) error {
	if quiet {
		fmt.Fprintln(c.stdout, res.GetRun().GetRunId())
		return nil
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	if res.GetExisting() {
		fmt.Fprintln(c.stdout, "an existing run matched --run-request-id:")
	}
	printRun(c.stdout, res.GetRun())
	return nil
}

func (c *cli) start(args []string) error {
	pos, err := c.parse(c.flags("start", true), args, "RUN")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	run, err := c.client().StartRun(ctx, pos[0])
	if err != nil {
		return err
	}
	return c.printRunOrJSON(run, &weftv1.StartRunResponse{Run: run})
}

func (c *cli) get(args []string) error {
	pos, err := c.parse(c.flags("get", true), args, "RUN")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	cl := c.client()
	run, err := cl.GetRun(ctx, pos[0])
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, &weftv1.GetRunResponse{Run: run})
	}
	printRun(c.stdout, run, unservedActivities(ctx, cl, run)...)
	return nil
}

func (c *cli) list(args []string) error {
	fs := c.flags("list", true)
	statuses := fs.String("status", "", "comma-separated statuses, e.g. running,blocked")
	plan := fs.String("plan", "", "only runs of this plan id")
	project := fs.String("project", "", "only runs of this project")
	env := fs.String("env", "", "only runs of this environment")
	limit := fs.Uint("limit", 0, "at most this many runs (default 100, max 1000)")
	page := fs.String("page-token", "", "the next page token of a previous list")
	query := fs.String("query", "", `only runs matching this query, e.g. 'status = "FAILED" AND customer = "acme"'`)
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	req := &weftv1.ListRunsRequest{PlanId: *plan, ProjectId: *project, EnvironmentId: *env, Query: *query,
		PageSize: uint32(min(*limit, 1000)), PageToken: *page}
	for s := range strings.SplitSeq(*statuses, ",") {
		if s = strings.TrimSpace(s); s == "" {
			continue
		}
		st, ok := parseEnum(weftv1.RunStatus_value, "RUN_STATUS_", s)
		if !ok {
			return usageError("unknown status %q (want e.g. pending, running, blocked, completed, failed, cancelled)", s)
		}
		req.Statuses = append(req.Statuses, weftv1.RunStatus(st))
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().ListRuns(ctx, req)
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	printRuns(c.stdout, res)
	return nil
}

func (c *cli) events(args []string) error {
	fs := c.flags("events", true)
	watch := fs.Bool("watch", false, "keep streaming new events until the run ends")
	after := fs.Uint64("after", 0, "only events after this run_seq")
	pos, err := c.parse(fs, args, "RUN")
	if err != nil {
		return err
	}
	p := newEventPrinter(c.stdout, c.g.output == "json")
	if *watch {
		for ev, err := range c.client().WatchEvents(c.ctx, pos[0], *after) {
			if err != nil {
				return err
			}
			p.print(ev)
		}
		return nil
	}
	cl := c.client()
	for {
		ctx, cancel := c.callCtx()
		res, err := cl.ListEvents(ctx, &weftv1.ListEventsRequest{RunId: pos[0], AfterSeq: *after, PageSize: 1000})
		cancel()
		if err != nil {
			return err
		}
		for _, ev := range res.GetEvents() {
			p.print(ev)
			*after = max(*after, ev.GetRunSeq())
		}
		if !res.GetHasMore() || len(res.GetEvents()) == 0 {
			return nil
		}
	}
}

func (c *cli) signal(args []string) error {
	fs := c.flags("signal", true)
	signalID := fs.String("signal-id", "", "makes the signal idempotent (default: a fresh UUID, reused on retries)")
	payload := fs.String("payload", "", "the signal's payload, as JSON")
	anyName := fs.Bool("any-name", false, "send the signal even when no step of the run's workflow waits for its name")
	pos, err := c.parse(fs, args, "RUN", "NAME")
	if err != nil {
		return err
	}
	req := &weftv1.SignalRunRequest{RunId: pos[0], SignalName: pos[1], SignalId: optional(*signalID)}
	if req.Payload, err = jsonFlag("--payload", *payload); err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	cl := c.client()
	if !*anyName {
		if err := checkSignalName(ctx, cl, pos[0], pos[1]); err != nil {
			return err
		}
	}
	res, err := cl.SignalRun(ctx, req)
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	r := res.GetResult()
	fmt.Fprintf(c.stdout, "signal %s accepted for run %s (signal id %s)\n", r.GetSignalName(), r.GetRunId(), r.GetSignalId())
	if res.GetDuplicate() {
		fmt.Fprintln(c.stdout, "duplicate: answered with the original result")
	}
	return nil
}

func (c *cli) complete(args []string) error {
	fs := c.flags("complete", false)
	token := fs.String("token", "", "the completion token weft get shows for the step (required)")
	outcome := fs.String("outcome", "succeeded", "succeeded, failed or cancelled")
	actor := fs.String("actor", "", "who completes the step (required; not the run's submitter)")
	notes := fs.String("notes", "", "free-form notes")
	output := fs.String("output", "", "the step's output, as JSON (use -o for the output format)")
	var evidence stringList
	fs.Var(&evidence, "evidence", "an evidence reference (repeatable)")
	pos, err := c.parse(fs, args, "RUN", "ACTION")
	if err != nil {
		return err
	}
	if *token == "" || *actor == "" {
		return usageError("--token and --actor are required")
	}
	oc, ok := parseEnum(weftv1.ManualOutcome_value, "MANUAL_OUTCOME_", *outcome)
	if !ok || oc == 0 {
		return usageError("--outcome must be succeeded, failed or cancelled, got %q", *outcome)
	}
	req := &weftv1.CompleteManualActionRequest{SchemaVersion: 1, RunId: pos[0], ActionId: pos[1],
		CompletionToken: *token, Outcome: weftv1.ManualOutcome(oc), ActorUserId: *actor,
		CompletedAt: timestamppb.Now(), Notes: *notes, EvidenceRefs: evidence}
	if req.Output, err = jsonFlag("--output", *output); err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().CompleteManualAction(ctx, req)
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	r := res.GetResult()
	fmt.Fprintf(c.stdout, "step %s of run %s completed %s by %s (principal %s)\n", r.GetActionId(), r.GetRunId(),
		enumName(r.GetOutcome().String(), "MANUAL_OUTCOME_"), r.GetActorUserId(), principalText(r.GetPrincipal()))
	if res.GetDuplicate() {
		fmt.Fprintln(c.stdout, "duplicate: answered with the original result")
	}
	return nil
}

// control runs one control-signal command: RUN [ACTION] with --reason and --signal-id.
func (c *cli) control(name string, args []string, withAction bool,
	call func(ctx context.Context, cl *client.Client, runID, actionID, reason string, id *string) (*weftv1.Run, proto.Message, error)) error {
	return c.controlWith(name, args, withAction, nil, call)
}

// controlWith is control with flags of the command's own, defined by extra before parsing.
func (c *cli) controlWith(name string, args []string, withAction bool, extra func(*flag.FlagSet),
	call func(ctx context.Context, cl *client.Client, runID, actionID, reason string, id *string) (*weftv1.Run, proto.Message, error)) error {
	fs := c.flags(name, true)
	if extra != nil {
		extra(fs)
	}
	reason := fs.String("reason", "", "why (recorded)")
	signalID := fs.String("signal-id", "", "makes the call idempotent (default: a fresh UUID, reused on retries)")
	names := []string{"RUN"}
	if withAction {
		names = append(names, "ACTION")
	}
	pos, err := c.parse(fs, args, names...)
	if err != nil {
		return err
	}
	action := ""
	if withAction {
		action = pos[1]
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	run, res, err := call(ctx, c.client(), pos[0], action, *reason, optional(*signalID))
	if err != nil {
		return err
	}
	return c.printRunOrJSON(run, res)
}

func (c *cli) approve(args []string) error {
	return c.control("approve", args, false, func(ctx context.Context, cl *client.Client, run, _, reason string, id *string) (*weftv1.Run, proto.Message, error) {
		res, err := cl.ApproveRun(ctx, &weftv1.ApproveRunRequest{RunId: run, Reason: reason, SignalId: id})
		return res.GetRun(), res, err
	})
}

func (c *cli) pause(args []string) error {
	return c.control("pause", args, false, func(ctx context.Context, cl *client.Client, run, _, reason string, id *string) (*weftv1.Run, proto.Message, error) {
		res, err := cl.PauseRun(ctx, &weftv1.PauseRunRequest{RunId: run, Reason: reason, SignalId: id})
		return res.GetRun(), res, err
	})
}

func (c *cli) resume(args []string) error {
	return c.control("resume", args, false, func(ctx context.Context, cl *client.Client, run, _, reason string, id *string) (*weftv1.Run, proto.Message, error) {
		res, err := cl.ResumeRun(ctx, &weftv1.ResumeRunRequest{RunId: run, Reason: reason, SignalId: id})
		return res.GetRun(), res, err
	})
}

func (c *cli) cancel(args []string) error {
	var compensate *bool
	flags := func(fs *flag.FlagSet) {
		compensate = fs.Bool("compensate", false, "compensate the steps that succeeded, in reverse completion order, before the run ends CANCELLED")
	}
	return c.controlWith("cancel", args, false, flags, func(ctx context.Context, cl *client.Client, run, _, reason string, id *string) (*weftv1.Run, proto.Message, error) {
		res, err := cl.CancelRun(ctx, &weftv1.CancelRunRequest{RunId: run, Reason: reason, SignalId: id, Compensate: *compensate})
		return res.GetRun(), res, err
	})
}

// deleteRun removes a finished run (docs/semantics.md#delete-run).
func (c *cli) deleteRun(args []string) error {
	pos, err := c.parse(c.flags("delete", true), args, "RUN")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().DeleteRun(ctx, pos[0])
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	if res.GetRemoved() {
		fmt.Fprintf(c.stdout, "deleted %s\n", res.GetRunId())
	} else {
		fmt.Fprintf(c.stdout, "deleted %s (its last records go in the background)\n", res.GetRunId())
	}
	return nil
}

func (c *cli) retryStep(args []string) error {
	return c.control("retry-step", args, true, func(ctx context.Context, cl *client.Client, run, action, reason string, id *string) (*weftv1.Run, proto.Message, error) {
		res, err := cl.RetryStep(ctx, &weftv1.RetryStepRequest{RunId: run, ActionId: action, Reason: reason, SignalId: id})
		return res.GetRun(), res, err
	})
}

func (c *cli) skipStep(args []string) error {
	return c.control("skip-step", args, true, func(ctx context.Context, cl *client.Client, run, action, reason string, id *string) (*weftv1.Run, proto.Message, error) {
		res, err := cl.SkipStep(ctx, &weftv1.SkipStepRequest{RunId: run, ActionId: action, Reason: reason, SignalId: id})
		return res.GetRun(), res, err
	})
}

// rerun takes an ended run back to RUNNING from --from (docs/semantics.md#rerun).
func (c *cli) rerun(args []string) error {
	var from *string
	return c.controlWith("rerun", args, false, func(fs *flag.FlagSet) {
		from = fs.String("from", "", "the step to rerun from (required)")
	}, func(ctx context.Context, cl *client.Client, run, _, reason string, id *string) (*weftv1.Run, proto.Message, error) {
		if *from == "" {
			return nil, nil, usageError("rerun: --from STEP is required")
		}
		res, err := cl.RerunRun(ctx, &weftv1.RerunRunRequest{RunId: run, FromStep: *from, Reason: reason, SignalId: id})
		return res.GetRun(), res, err
	})
}

func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// stringList is a repeatable string flag.
type stringList []string

func (l *stringList) String() string     { return strings.Join(*l, ",") }
func (l *stringList) Set(v string) error { *l = append(*l, v); return nil }

// checkSignalName refuses a signal whose name no step of the run's
// workflow waits for (exit 1), naming the ones its steps do wait for: the
// run would keep it and go on waiting on the name its step declares.
func checkSignalName(ctx context.Context, cl *client.Client, runID, name string) error {
	run, err := cl.GetRun(ctx, runID)
	if err != nil {
		return err
	}
	var names []string
	for _, a := range run.GetDefinition().GetActions() {
		if n := a.GetWaitForSignal().GetSignalName(); n != "" {
			if n == name {
				return nil
			}
			names = append(names, n)
		}
	}
	if run.GetDefinition() == nil {
		return nil
	}
	waits := "no step of its workflow waits for a signal"
	if len(names) > 0 {
		waits = "its steps wait for " + strings.Join(names, ", ")
		if best := closest(name, names); best != "" {
			waits += "; did you mean " + best + "?"
		}
	}
	return fmt.Errorf("run %s: no step waits for signal %q (%s); nothing was sent (--any-name sends it anyway)",
		runID, name, waits)
}

// closest answers the name nearest to s when it is a likely typo of it.
func closest(s string, names []string) string {
	best, bestDist := "", -1
	for _, n := range names {
		if d := levenshtein(strings.ToLower(s), strings.ToLower(n)); bestDist < 0 || d < bestDist {
			best, bestDist = n, d
		}
	}
	if bestDist < 0 || bestDist > max(2, len(best)/3) {
		return ""
	}
	return best
}

// levenshtein is the edit distance between two short names.
func levenshtein(a, b string) int {
	prev := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur := make([]int, len(b)+1)
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev = cur
	}
	return prev[len(b)]
}

// principalText names the principal a call authenticated as; a weftd
// without --auth-tokens authenticates nobody.
func principalText(p string) string {
	if p == "" {
		return "none: weftd authenticates nobody"
	}
	return p
}
