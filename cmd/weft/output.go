package main

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// protoJSON encodes with proto field names (started_at, not startedAt).
var protoJSON = protojson.MarshalOptions{UseProtoNames: true}

// printJSON prints one response as indented proto JSON. protojson's own
// whitespace is deliberately unstable, so it is normalised here.
func printJSON(w io.Writer, m proto.Message) error {
	return writeJSON(w, m, "  ")
}

// writeJSON writes m as proto JSON followed by a newline: indented by
// indent, or on one line when indent is empty.
func writeJSON(w io.Writer, m proto.Message, indent string) error {
	b, err := protoJSON.Marshal(m)
	if err != nil {
		return err
	}
	var buf bytes.Buffer
	if indent == "" {
		err = json.Compact(&buf, b)
	} else {
		err = json.Indent(&buf, b, "", indent)
	}
	if err != nil {
		return err
	}
	buf.WriteByte('\n')
	_, err = w.Write(buf.Bytes())
	return err
}

func (c *cli) printRunOrJSON(run *weftv1.Run, res proto.Message) error {
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	printRun(c.stdout, run)
	return nil
}

// enumName strips an enum's prefix; values this CLI does not know print as numbers.
func enumName(s, prefix string) string { return strings.TrimPrefix(s, prefix) }

// parseEnum reads "running", "RUNNING" or "RUN_STATUS_RUNNING".
func parseEnum(values map[string]int32, prefix, s string) (int32, bool) {
	s = strings.ToUpper(strings.ReplaceAll(strings.TrimSpace(s), "-", "_"))
	if v, ok := values[s]; ok {
		return v, true
	}
	v, ok := values[prefix+s]
	return v, ok
}

func when(ts *timestamppb.Timestamp) string {
	if ts == nil {
		return ""
	}
	return ts.AsTime().UTC().Format(time.RFC3339)
}

// printRun prints a run's summary and a table of its steps.
// notes are more things the run waits for, found beyond its snapshot
// (unservedActivities).
func printRun(w io.Writer, run *weftv1.Run, notes ...string) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	status := enumName(run.GetStatus().String(), "RUN_STATUS_")
	if run.GetSubstatus() != weftv1.RunSubstatus_RUN_SUBSTATUS_UNSPECIFIED {
		status += " (" + enumName(run.GetSubstatus().String(), "RUN_SUBSTATUS_") + ")"
	}
	fmt.Fprintf(tw, "run\t%s\n", run.GetRunId())
	fmt.Fprintf(tw, "status\t%s\n", status)
	fmt.Fprintf(tw, "plan\t%s@%s\n", run.GetPlanId(), run.GetPlanVersion())
	fmt.Fprintf(tw, "created\t%s\n", when(run.GetCreatedAt()))
	if p := run.GetParentRunId(); p != "" {
		fmt.Fprintf(tw, "parent\t%s (step %s)\n", p, run.GetParentStep())
	}
	if m := run.GetMessage(); m != "" {
		fmt.Fprintf(tw, "message\t%s\n", m)
	}
	if c := run.GetConcurrency(); c != nil { // docs/semantics.md#run-concurrency
		fmt.Fprintf(tw, "concurrency\tkey %s: %d/%d started (%s)\n", c.GetKey(), c.GetInUse(), c.GetLimit(), c.GetStrategy())
	}
	if w := waitingOn(run); w != "" {
		fmt.Fprintf(tw, "waiting on\t%s\n", w)
	}
	for _, n := range notes {
		fmt.Fprintf(tw, "waiting on\t%s\n", n)
	}
	if e := run.GetError(); e != nil {
		fmt.Fprintf(tw, "error\t%s\n", runError(e))
	}
	if o := run.GetCompensationOutcome(); o != weftv1.CompensationOutcome_COMPENSATION_OUTCOME_UNSPECIFIED {
		fmt.Fprintf(tw, "compensation\t%s\n", enumName(o.String(), "COMPENSATION_OUTCOME_"))
	}
	if c := run.GetCancellation(); c != nil {
		asked := ""
		if c.GetCompensate() {
			asked = " (compensation asked)"
		}
		fmt.Fprintf(tw, "cancelled\tby %s: %s%s\n", c.GetCancelledBy(), c.GetReason(), asked)
	}
	if r := run.GetRetainUntil(); r != nil {
		fmt.Fprintf(tw, "retained until\t%s\n", when(r))
	}
	if a := run.GetSearchAttributes(); len(a) > 0 {
		fmt.Fprintf(tw, "attributes\t%s\n", attributesText(a))
	}
	_ = tw.Flush()
	if len(run.GetSteps()) == 0 {
		return
	}
	fmt.Fprintln(w)
	tw = tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "STEP\tSTATUS\tATTEMPT\tDETAIL")
	for _, s := range stepsInOrder(run.GetSteps()) {
		fmt.Fprintf(tw, "%s\t%s\t%d.%d\t%s\n", s.GetActionId(), enumName(s.GetStatus().String(), "STEP_STATUS_"),
			s.GetLogicalAttemptId(), s.GetEngineAttemptId(), stepDetail(s))
	}
	_ = tw.Flush()
}

// stepsInOrder answers a run's steps with each fan-out's items right
// after their forEach step, in index order (docs/semantics.md#for-each).
func stepsInOrder(steps []*weftv1.Step) []*weftv1.Step {
	items := map[string][]*weftv1.Step{}
	for _, s := range steps {
		if p := s.GetParentStep(); p != "" {
			items[p] = append(items[p], s)
		}
	}
	if len(items) == 0 {
		return steps
	}
	out := make([]*weftv1.Step, 0, len(steps))
	for _, s := range steps {
		if s.GetParentStep() != "" {
			continue
		}
		out = append(out, s)
		its := items[s.GetActionId()]
		slices.SortFunc(its, func(a, b *weftv1.Step) int { return cmp.Compare(a.GetItemIndex(), b.GetItemIndex()) })
		out = append(out, its...)
	}
	return out
}

// fanOutText says how a forEach step's items stand.
func fanOutText(f *weftv1.FanOutProgress) string {
	s := fmt.Sprintf("fan-out: %d/%d succeeded, %d in flight (at most %d), %d pending", f.GetSucceeded(), f.GetItems(),
		f.GetInFlight(), f.GetMaxConcurrency(), f.GetPending())
	if n := f.GetFailed(); n > 0 {
		s += fmt.Sprintf(", %d failed", n)
	}
	if n := f.GetCancelled(); n > 0 {
		s += fmt.Sprintf(", %d cancelled", n)
	}
	return s
}

// stepDetail is the one thing a person most needs to know about a step.
func stepDetail(s *weftv1.Step) string {
	var parts []string
	if f := s.GetFanOut(); f != nil {
		parts = append(parts, fanOutText(f))
	}
	if p := s.GetParentStep(); p != "" {
		parts = append(parts, fmt.Sprintf("item %d of %s", s.GetItemIndex(), p))
	}
	if c := s.GetChildRunId(); c != "" {
		parts = append(parts, "child run "+c)
	}
	if t := s.GetCompletionToken(); t != "" {
		parts = append(parts, "completion token "+t)
	}
	if sig := s.GetWaitingForSignal(); sig != "" {
		parts = append(parts, "waiting for signal "+sig)
	}
	if f := s.GetFlowWait(); f != "" {
		parts = append(parts, "waiting: "+f)
	}
	if e := s.GetError(); e != nil {
		parts = append(parts, stepError(e))
	}
	if r := s.GetReason(); r == "condition" && s.GetStatus() == weftv1.StepStatus_STEP_STATUS_SKIPPED {
		parts = append(parts, "skipped by condition (when was false)")
	} else if r != "" {
		parts = append(parts, r)
	}
	if w := s.GetWakeAt(); w != nil {
		if s.GetStatus() == weftv1.StepStatus_STEP_STATUS_RUNNING {
			parts = append(parts, "sleeping until "+when(w))
		} else {
			parts = append(parts, "slept until "+when(w))
		}
	}
	if n := s.GetIteration(); n > 0 {
		parts = append(parts, fmt.Sprintf("iteration %d", n))
	}
	if cs := s.GetCompensationStatus(); cs != weftv1.CompensationStatus_COMPENSATION_STATUS_UNSPECIFIED {
		parts = append(parts, "compensation "+enumName(cs.String(), "COMPENSATION_STATUS_"))
	}
	return strings.Join(parts, "; ")
}

// stepError prints an error's class, code and message, each once: weftd's
// messages of a run's final error often begin with the class and code
// already ("ERROR_CLASS_BUSINESS_CONFLICT (target_locked): …").
func stepError(e *weftv1.StepError) string {
	s := enumName(e.GetErrorClass().String(), "ERROR_CLASS_")
	if e.GetCode() != "" {
		s += " " + e.GetCode()
	}
	msg := strings.TrimPrefix(e.GetMessage(), e.GetErrorClass().String())
	if msg != e.GetMessage() {
		msg = strings.TrimPrefix(strings.TrimPrefix(msg, " ("+e.GetCode()+")"), ":")
		msg = strings.TrimSpace(msg)
	}
	if msg != "" {
		s += ": " + msg
	}
	return s
}

func runError(e *weftv1.RunError) string {
	var parts []string
	if e.GetWorkflowTimeout() {
		parts = append(parts, "workflow timeout")
	}
	if e.GetActionId() != "" {
		parts = append(parts, "step "+e.GetActionId())
	}
	if e.GetError() != nil {
		parts = append(parts, stepError(e.GetError()))
	}
	return strings.Join(parts, ": ")
}

// printRuns prints a page of runs as a table.
func printRuns(w io.Writer, res *weftv1.ListRunsResponse) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "RUN\tSTATUS\tPLAN\tCREATED\tWAITING ON")
	for _, r := range res.GetRuns() {
		fmt.Fprintf(tw, "%s\t%s\t%s@%s\t%s\t%s\n", r.GetRunId(), enumName(r.GetStatus().String(), "RUN_STATUS_"),
			r.GetPlanId(), r.GetPlanVersion(), when(r.GetCreatedAt()), waitingShort(r))
	}
	_ = tw.Flush()
	if t := res.GetNextPageToken(); t != "" {
		fmt.Fprintf(w, "more: --page-token %s\n", t)
	}
}

// eventPrinter prints events one per line as they come, so --watch shows
// each at once: fixed-width columns, or one JSON object per line.
type eventPrinter struct {
	w      io.Writer
	json   bool
	header bool
}

func newEventPrinter(w io.Writer, json bool) *eventPrinter { return &eventPrinter{w: w, json: json} }

func (p *eventPrinter) print(ev *weftv1.Event) {
	if p.json {
		_ = writeJSON(p.w, ev, "")
		return
	}
	if !p.header {
		p.header = true
		fmt.Fprintf(p.w, "%-5s %-20s %-22s %-24s %s\n", "SEQ", "EMITTED", "TYPE", "STEP", "DETAIL")
	}
	fmt.Fprintf(p.w, "%-5s %-20s %-22s %-24s %s\n", strconv.FormatUint(ev.GetRunSeq(), 10), when(ev.GetEmittedAt()),
		ev.GetEventType(), ev.GetStepId(), eventDetail(ev))
}

// eventDetail summarises the payloads a person watches for; other event
// types (including ones this CLI does not know) print no detail.
func eventDetail(ev *weftv1.Event) string {
	switch p := ev.GetPayload().(type) {
	case *weftv1.Event_StepWaiting:
		if t := p.StepWaiting.GetCompletionToken(); t != "" {
			return "completion token " + t
		}
		if s := p.StepWaiting.GetSignalName(); s != "" {
			return "waiting for signal " + s
		}
	case *weftv1.Event_StepFailed:
		return stepError(p.StepFailed.GetError())
	case *weftv1.Event_RunFailed:
		return runError(p.RunFailed.GetError())
	case *weftv1.Event_SignalAccepted:
		return "signal " + p.SignalAccepted.GetResult().GetSignalName()
	case *weftv1.Event_SignalRejected:
		return fmt.Sprintf("signal %s refused: %s", p.SignalRejected.GetSignalName(), p.SignalRejected.GetReason())
	case *weftv1.Event_StepAttemptRecorded:
		return attemptDetail(p.StepAttemptRecorded.GetAttempt())
	case *weftv1.Event_RunBlocked:
		return strings.TrimSuffix("waiting on "+strings.Join(p.RunBlocked.GetWaitingOn(), ", ")+": "+p.RunBlocked.GetReason(), ": ")
	case *weftv1.Event_StepScheduled:
		if p.StepScheduled.GetQueue() == "" {
			return "" // a sub-workflow step: its child starts next
		}
		return "queue " + p.StepScheduled.GetQueue()
	case *weftv1.Event_StepSkipped:
		return p.StepSkipped.GetReason()
	case *weftv1.Event_ChildRunStarted:
		return "child run " + p.ChildRunStarted.GetChildRunId()
	case *weftv1.Event_ChildRunEnded:
		return "child run " + p.ChildRunEnded.GetChildRunId() + " " + enumName(p.ChildRunEnded.GetStatus().String(), "RUN_STATUS_")
	case *weftv1.Event_StepSleeping:
		return "sleeping until " + when(p.StepSleeping.GetWakeAt())
	case *weftv1.Event_StepFannedOut:
		return fmt.Sprintf("fanned out over %d items, at most %d at once", p.StepFannedOut.GetItemCount(), p.StepFannedOut.GetMaxConcurrency())
	case *weftv1.Event_StepIterated:
		return fmt.Sprintf("iteration %d done; next is logical attempt %d", p.StepIterated.GetIteration(), p.StepIterated.GetNewLogicalAttemptId())
	case *weftv1.Event_StepCancelled:
		return p.StepCancelled.GetReason()
	case *weftv1.Event_StepRetried:
		return "by " + p.StepRetried.GetRequestedBy()
	case *weftv1.Event_RunPaused:
		return strings.TrimSuffix("by "+p.RunPaused.GetRequestedBy()+": "+p.RunPaused.GetReason(), ": ")
	case *weftv1.Event_RunResumed:
		return "by " + p.RunResumed.GetRequestedBy()
	case *weftv1.Event_RunCancelled:
		c := p.RunCancelled.GetCancellation()
		return strings.TrimSuffix("by "+c.GetCancelledBy()+": "+c.GetReason(), ": ")
	case *weftv1.Event_RunCompensating:
		return "after " + p.RunCompensating.GetFailedActionId()
	case *weftv1.Event_RunQueued:
		return p.RunQueued.GetReason()
	}
	return ""
}

// attemptDetail says how an attempt ended, who ran it and why it failed.
func attemptDetail(a *weftv1.Attempt) string {
	s := enumName(a.GetOutcome().String(), "ATTEMPT_OUTCOME_")
	if w := a.GetWorkerId(); w != "" {
		s += " on " + w
	}
	if e := a.GetError(); e != nil {
		s += ": " + stepError(e)
	}
	return s
}
