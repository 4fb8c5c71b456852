package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/engine/definition"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// scheduleCommands are weft schedule's subcommands, in the order usage lists them.
var scheduleCommands []command

func init() {
	scheduleCommands = []command{
		{"create", "ID FILE", "create a schedule of a workflow (--cron EXPR | --every DURATION, --tz, --overlap, --catchup)", (*cli).scheduleCreate},
		{"update", "ID [FILE]", "change a schedule's --cron/--every, --tz, --overlap, --catchup, --input or workflow FILE", (*cli).scheduleUpdate},
		{"list", "", "list schedules by id", (*cli).scheduleList},
		{"describe", "ID", "show a schedule and its next fire times (--next N)", (*cli).scheduleDescribe},
		{"pause", "ID", "pause a schedule", (*cli).schedulePause},
		{"resume", "ID", "resume a schedule from its next fire time", (*cli).scheduleResume},
		{"trigger", "ID", "start one run of the schedule now (--request-id makes retries start one run)", (*cli).scheduleTrigger},
		{"backfill", "ID", "fire every nominal time in --from .. --to (RFC 3339)", (*cli).scheduleBackfill},
		{"delete", "ID", "delete a schedule (its runs stay)", (*cli).scheduleDelete},
	}
}

// schedule dispatches weft schedule SUBCOMMAND.
func (c *cli) schedule(args []string) error {
	return c.dispatch("schedule", scheduleCommands, args)
}

// dispatch runs weft NAME SUBCOMMAND, one of subs. Its help and usage lines
// name the subcommand (c.cmd becomes "schedule create", …).
func (c *cli) dispatch(name string, subs []command, args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help") {
		printSubcommands(c.stdout, name, subs)
		return nil
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		printSubcommands(c.stderr, name, subs)
		return usageError("weft %s needs a subcommand", name)
	}
	for _, sc := range subs {
		if sc.name == args[0] {
			c.cmd = &command{name: name + " " + sc.name, args: sc.args, summary: sc.summary, run: sc.run}
			return sc.run(c, args[1:])
		}
	}
	printSubcommands(c.stderr, name, subs)
	return usageError("unknown %s subcommand %q", name, args[0])
}

// printSubcommands prints weft NAME's usage: its subcommands.
func printSubcommands(w io.Writer, name string, subs []command) {
	fmt.Fprintf(w, "usage: weft %s SUBCOMMAND [arguments] [flags]\n", name)
	fmt.Fprintln(w, "\nsubcommands:")
	for _, sc := range subs {
		fmt.Fprintf(w, "  %-9s %-9s %s\n", sc.name, sc.args, sc.summary)
	}
	fmt.Fprintf(w, "\nweft %s SUBCOMMAND --help shows a subcommand's flags.\n", name)
}

// overlapPolicies are the --overlap values.
var overlapPolicies = map[string]weftv1.OverlapPolicy{
	"skip":       weftv1.OverlapPolicy_OVERLAP_POLICY_SKIP,
	"buffer-one": weftv1.OverlapPolicy_OVERLAP_POLICY_BUFFER_ONE,
	"allow-all":  weftv1.OverlapPolicy_OVERLAP_POLICY_ALLOW_ALL,
}

func (c *cli) scheduleCreate(args []string) error {
	fs := c.flags("schedule create", true)
	cronExpr := fs.String("cron", "", "a five-field cron expression or a descriptor such as @daily")
	every := fs.Duration("every", 0, "fire at every multiple of this interval since the Unix epoch (e.g. 15m)")
	tz := fs.String("tz", "", "IANA time zone the cron expression is read in (default UTC)")
	overlap := fs.String("overlap", "skip", "while the previous run is not terminal: skip, buffer-one or allow-all")
	catchup := fs.Duration("catchup", 0, "after downtime, fire nominal times at most this old (default 1m)")
	input := fs.String("input", "", "every run's input, as JSON")
	project := fs.String("project", "", "the runs' project (default \"default\")")
	env := fs.String("env", "", "the runs' environment (default \"default\")")
	paused := fs.Bool("paused", false, "create the schedule paused")
	pos, err := c.parse(fs, args, "ID", "FILE")
	if err != nil {
		return err
	}
	spec, err := specFlags(*cronExpr, *every, *tz, *overlap, *catchup)
	if err != nil {
		return err
	}
	def, paths, err := loadDefinition(pos[1])
	if err != nil {
		return err
	}
	req := &weftv1.CreateScheduleRequest{ScheduleId: pos[0], Spec: spec, Definition: def,
		ProjectId: *project, EnvironmentId: *env, Paused: *paused}
	if req.Input, err = jsonFlag("--input", *input); err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	s, err := c.client().CreateSchedule(ctx, req)
	if err != nil {
		return placeViolations(err, paths, scheduleFlags)
	}
	return c.printSchedule(s, &weftv1.CreateScheduleResponse{Schedule: s})
}

// specFlags builds a spec from create's flags.
func specFlags(cronExpr string, every time.Duration, tz, overlap string, catchup time.Duration) (*weftv1.ScheduleSpec, error) {
	policy, ok := overlapPolicies[overlap]
	if !ok {
		return nil, usageError("--overlap must be skip, buffer-one or allow-all, got %q", overlap)
	}
	if catchup < 0 {
		return nil, usageError("--catchup must not be negative, got %s", catchup)
	}
	spec := &weftv1.ScheduleSpec{TimeZone: tz, OverlapPolicy: policy, CatchupWindowMs: uint64(catchup.Milliseconds())}
	switch {
	case (cronExpr == "") == (every == 0):
		return nil, usageError("give exactly one of --cron and --every")
	case every < 0:
		return nil, usageError("--every must be positive, got %s", every)
	case every > 0:
		spec.Trigger = &weftv1.ScheduleSpec_IntervalMs{IntervalMs: uint64(every.Milliseconds())}
	default:
		spec.Trigger = &weftv1.ScheduleSpec_Cron{Cron: cronExpr}
	}
	return spec, nil
}

func (c *cli) scheduleUpdate(args []string) error {
	fs := c.flags("schedule update", true)
	cronExpr := fs.String("cron", "", "a new five-field cron expression or descriptor (replaces --every)")
	every := fs.Duration("every", 0, "a new interval (replaces --cron)")
	tz := fs.String("tz", "", "a new IANA time zone for the cron expression (\"\" is UTC)")
	overlap := fs.String("overlap", "", "a new overlap policy: skip, buffer-one or allow-all")
	catchup := fs.Duration("catchup", 0, "a new catch-up window (0 is the default, 1m)")
	input := fs.String("input", "", "every later run's input, as JSON (null clears it)")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if err := c.checkGlobals(); err != nil {
		return err
	}
	if len(pos) < 1 || len(pos) > 2 || strings.TrimSpace(pos[0]) == "" {
		return usageError("want ID [FILE], got %d argument(s)", len(pos))
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	req := &weftv1.UpdateScheduleRequest{ScheduleId: pos[0]}
	if req.Spec, err = specChangeFlags(set, *cronExpr, *every, *tz, *overlap, *catchup); err != nil {
		return err
	}
	var paths *definition.PathMap
	if len(pos) == 2 {
		if req.Definition, paths, err = loadDefinition(pos[1]); err != nil {
			return err
		}
	}
	if set["input"] {
		if req.Input, err = jsonFlag("--input", *input); err != nil {
			return err
		}
	}
	if req.Spec == nil && req.Definition == nil && req.Input == nil {
		return usageError("give something to change: a flag (--cron, --every, --tz, --overlap, --catchup, --input) or a workflow FILE")
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	s, err := c.client().UpdateSchedule(ctx, req)
	if err != nil {
		return placeViolations(err, paths, scheduleFlags)
	}
	return c.printSchedule(s, &weftv1.UpdateScheduleResponse{Schedule: s})
}

// specChangeFlags builds a spec change from update's flags that were given;
// it answers nil when none was.
func specChangeFlags(set map[string]bool, cronExpr string, every time.Duration, tz, overlap string, catchup time.Duration) (*weftv1.ScheduleSpecChange, error) {
	change := &weftv1.ScheduleSpecChange{}
	switch {
	case set["cron"] && set["every"]:
		return nil, usageError("give at most one of --cron and --every")
	case set["every"] && every <= 0:
		return nil, usageError("--every must be positive, got %s", every)
	case set["every"]:
		change.Trigger = &weftv1.ScheduleSpecChange_IntervalMs{IntervalMs: uint64(every.Milliseconds())}
	case set["cron"]:
		change.Trigger = &weftv1.ScheduleSpecChange_Cron{Cron: cronExpr}
	}
	if set["tz"] {
		change.TimeZone = &tz
	}
	if set["overlap"] {
		policy, ok := overlapPolicies[overlap]
		if !ok {
			return nil, usageError("--overlap must be skip, buffer-one or allow-all, got %q", overlap)
		}
		change.OverlapPolicy = &policy
	}
	if set["catchup"] {
		if catchup < 0 {
			return nil, usageError("--catchup must not be negative, got %s", catchup)
		}
		ms := uint64(catchup.Milliseconds())
		change.CatchupWindowMs = &ms
	}
	if proto.Equal(change, &weftv1.ScheduleSpecChange{}) {
		return nil, nil
	}
	return change, nil
}

func (c *cli) scheduleList(args []string) error {
	fs := c.flags("schedule list", true)
	pageSize := fs.Uint("page-size", 0, "at most this many (default 100)")
	pageToken := fs.String("page-token", "", "the next page, from a previous list")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().ListSchedules(ctx, &weftv1.ListSchedulesRequest{PageSize: uint32(*pageSize), PageToken: *pageToken})
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	printSchedules(c.stdout, res)
	return nil
}

func (c *cli) scheduleDescribe(args []string) error {
	fs := c.flags("schedule describe", true)
	next := fs.Uint("next", 5, "how many next fire times to show (at most 100)")
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	s, err := c.client().GetSchedule(ctx, pos[0], uint32(*next))
	if err != nil {
		return err
	}
	return c.printSchedule(s, &weftv1.GetScheduleResponse{Schedule: s})
}

func (c *cli) schedulePause(args []string) error {
	pos, err := c.parse(c.flags("schedule pause", true), args, "ID")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	s, err := c.client().PauseSchedule(ctx, pos[0])
	if err != nil {
		return err
	}
	return c.printSchedule(s, &weftv1.PauseScheduleResponse{Schedule: s})
}

func (c *cli) scheduleResume(args []string) error {
	pos, err := c.parse(c.flags("schedule resume", true), args, "ID")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	s, err := c.client().ResumeSchedule(ctx, pos[0])
	if err != nil {
		return err
	}
	return c.printSchedule(s, &weftv1.ResumeScheduleResponse{Schedule: s})
}

func (c *cli) scheduleTrigger(args []string) error {
	fs := c.flags("schedule trigger", true)
	requestID := fs.String("request-id", "", "makes the trigger idempotent: every call with it starts (or answers) one run")
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	run, err := c.client().TriggerSchedule(ctx, pos[0], *requestID)
	if err != nil {
		return err
	}
	return c.printRunOrJSON(run, &weftv1.TriggerScheduleResponse{Run: run})
}

func (c *cli) scheduleBackfill(args []string) error {
	fs := c.flags("schedule backfill", true)
	from := fs.String("from", "", "the range's first instant, RFC 3339 (inclusive)")
	to := fs.String("to", "", "the range's end, RFC 3339 (exclusive)")
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	start, err := timeFlag("--from", *from)
	if err != nil {
		return err
	}
	end, err := timeFlag("--to", *to)
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().BackfillSchedule(ctx, &weftv1.BackfillScheduleRequest{ScheduleId: pos[0],
		StartTime: timestamppb.New(start), EndTime: timestamppb.New(end)})
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	fmt.Fprintf(c.stdout, "%d fire(s) decided:\n", len(res.GetFireTimes()))
	for _, t := range res.GetFireTimes() {
		fmt.Fprintln(c.stdout, when(t))
	}
	return nil
}

// timeFlag reads a required RFC 3339 flag.
func timeFlag(name, v string) (time.Time, error) {
	if v == "" {
		return time.Time{}, usageError("%s is required (RFC 3339, e.g. 2026-11-01T00:00:00Z)", name)
	}
	t, err := time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, usageError("%s must be RFC 3339 (e.g. 2026-11-01T00:00:00Z), got %q", name, v)
	}
	return t, nil
}

func (c *cli) scheduleDelete(args []string) error {
	pos, err := c.parse(c.flags("schedule delete", true), args, "ID")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	if err := c.client().DeleteSchedule(ctx, pos[0]); err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, &weftv1.DeleteScheduleResponse{})
	}
	fmt.Fprintf(c.stdout, "schedule %s deleted\n", pos[0])
	return nil
}

func (c *cli) printSchedule(s *weftv1.Schedule, res proto.Message) error {
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	printScheduleTable(c.stdout, s)
	return nil
}

// printScheduleTable prints one schedule: its spec, what it has done and
// its next fire times.
func printScheduleTable(w io.Writer, s *weftv1.Schedule) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	row := func(k, v string) { fmt.Fprintf(tw, "%s\t%s\n", k, v) }
	row("schedule", s.GetScheduleId())
	row("when", specText(s.GetSpec()))
	row("overlap", enumName(s.GetSpec().GetOverlapPolicy().String(), "OVERLAP_POLICY_"))
	row("catch-up", (time.Duration(s.GetSpec().GetCatchupWindowMs()) * time.Millisecond).String())
	row("plan", s.GetDefinition().GetPlanId()+"@"+s.GetDefinition().GetPlanVersion())
	row("paused", fmt.Sprint(s.GetPaused()))
	row("fires", fmt.Sprintf("%d (skipped %d, missed %d, failed %d, pending %d)",
		s.GetFires(), s.GetSkipped(), s.GetMissed(), s.GetFailed(), s.GetPendingFires()))
	if s.GetLastRunId() != "" {
		row("last fire", when(s.GetLastFireTime())+"  "+s.GetLastRunId())
	}
	if lag := s.GetLastFireLagMs(); lag > 0 {
		row("fire lag", (time.Duration(lag) * time.Millisecond).String())
	}
	if s.GetBufferedFireTime() != nil {
		row("buffered", when(s.GetBufferedFireTime()))
	}
	if s.GetLastError() != "" {
		row("last error", s.GetLastError())
	}
	for i, t := range s.GetNextFireTimes() {
		row(map[bool]string{true: "next", false: ""}[i == 0], when(t))
	}
	_ = tw.Flush()
}

// specText says when a spec fires.
func specText(s *weftv1.ScheduleSpec) string {
	if s.GetCron() == "" {
		return "every " + (time.Duration(s.GetIntervalMs()) * time.Millisecond).String()
	}
	tz := s.GetTimeZone()
	if tz == "" {
		tz = "UTC"
	}
	return "cron " + s.GetCron() + " (" + tz + ")"
}

// printSchedules prints a page of schedules as a table.
func printSchedules(w io.Writer, res *weftv1.ListSchedulesResponse) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "SCHEDULE\tWHEN\tPLAN\tPAUSED\tFIRES\tNEXT")
	for _, s := range res.GetSchedules() {
		var next *timestamppb.Timestamp
		if ts := s.GetNextFireTimes(); len(ts) > 0 {
			next = ts[0]
		}
		fmt.Fprintf(tw, "%s\t%s\t%s@%s\t%v\t%d\t%s\n", s.GetScheduleId(), specText(s.GetSpec()),
			s.GetDefinition().GetPlanId(), s.GetDefinition().GetPlanVersion(), s.GetPaused(), s.GetFires(), when(next))
	}
	_ = tw.Flush()
	if t := res.GetNextPageToken(); t != "" {
		fmt.Fprintf(w, "more: --page-token %s\n", t)
	}
}
