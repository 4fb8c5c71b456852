package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// batchCommands are weft batch's subcommands, in the order usage lists them.
var batchCommands []command

func init() {
	batchCommands = []command{
		{"start", "ID", "start a batch operation (--op cancel|pause|resume|rerun_from|retry_step|signal|delete, --runs ID,… | --runs-file FILE | --query Q, --rate N)", (*cli).batchStart},
		{"describe", "ID", "show a batch's progress and its runs' outcomes (--runs N)", (*cli).batchDescribe},
		{"cancel", "ID", "stop a batch; the runs it has not acted on are left alone", (*cli).batchCancel},
		{"list", "", "list batches by id", (*cli).batchList},
	}
}

// batch dispatches weft batch SUBCOMMAND (docs/semantics.md#batches).
func (c *cli) batch(args []string) error {
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "-help" || args[0] == "help") {
		printBatchUsage(c.stdout)
		return nil
	}
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		printBatchUsage(c.stderr)
		return usageError("weft batch needs a subcommand")
	}
	for _, sc := range batchCommands {
		if sc.name == args[0] {
			c.cmd = &command{name: "batch " + sc.name, args: sc.args, summary: sc.summary, run: sc.run}
			return sc.run(c, args[1:])
		}
	}
	printBatchUsage(c.stderr)
	return usageError("unknown batch subcommand %q", args[0])
}

func printBatchUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: weft batch SUBCOMMAND [arguments] [flags]")
	fmt.Fprintln(w, "\nsubcommands:")
	for _, sc := range batchCommands {
		fmt.Fprintf(w, "  %-9s %-3s %s\n", sc.name, sc.args, sc.summary)
	}
	fmt.Fprintln(w, "\nweft batch SUBCOMMAND --help shows a subcommand's flags.")
}

func (c *cli) batchStart(args []string) error {
	fs := c.flags("batch start", true)
	op := fs.String("op", "", "what to do to each run: cancel, pause, resume, rerun_from, retry_step, signal or delete (required)")
	runs := fs.String("runs", "", "the runs, comma-separated")
	runsFile := fs.String("runs-file", "", "a file of run ids, one a line")
	query := fs.String("query", "", "the runs a query of the run query language selects")
	rate := fs.Float64("rate", 0, "at most this many runs per second (default 10)")
	from := fs.String("from", "", "rerun_from: the step to rerun from")
	action := fs.String("action", "", "retry_step: the step to retry")
	signal := fs.String("signal", "", "signal: the signal's name")
	payload := fs.String("payload", "", "signal: the payload, as JSON")
	reason := fs.String("reason", "", "why (recorded with each run's control signal)")
	compensate := fs.Bool("compensate", false, "cancel: compensate the succeeded steps first")
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	operation, ok := parseEnum(weftv1.BatchOperation_value, "BATCH_OPERATION_", *op)
	if !ok || operation == 0 {
		return usageError("--op must be cancel, pause, resume, rerun_from, retry_step, signal or delete, got %q", *op)
	}
	req := &weftv1.StartBatchRequest{BatchId: pos[0], Operation: weftv1.BatchOperation(operation), Query: *query, Rate: *rate,
		FromStep: *from, ActionId: *action, SignalName: *signal, Reason: *reason, Compensate: *compensate}
	if req.RunIds, err = runIDsOf(*runs, *runsFile); err != nil {
		return err
	}
	if req.Payload, err = jsonFlag("--payload", *payload); err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().StartBatch(ctx, req)
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	if res.GetExisting() {
		fmt.Fprintf(c.stdout, "batch %s was started before; it is:\n", pos[0])
	}
	printBatch(c.stdout, res.GetBatch())
	return nil
}

// runIDsOf reads --runs and --runs-file.
func runIDsOf(list, file string) ([]string, error) {
	var ids []string
	for _, id := range strings.Split(list, ",") {
		if id = strings.TrimSpace(id); id != "" {
			ids = append(ids, id)
		}
	}
	if file == "" {
		return ids, nil
	}
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, usageError("--runs-file: %v", err)
	}
	for _, line := range strings.Split(string(b), "\n") {
		if id := strings.TrimSpace(line); id != "" {
			ids = append(ids, id)
		}
	}
	return ids, nil
}

func (c *cli) batchDescribe(args []string) error {
	fs := c.flags("batch describe", true)
	n := fs.Uint("runs", 20, "how many runs' outcomes to show (at most 1000)")
	pos, err := c.parse(fs, args, "ID")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().DescribeBatch(ctx, &weftv1.DescribeBatchRequest{BatchId: pos[0], PageSize: uint32(min(*n, 1000))})
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	printBatch(c.stdout, res.GetBatch())
	tw := tabwriter.NewWriter(c.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "\nRUN\tOUTCOME\tCODE\tMESSAGE")
	for _, r := range res.GetRuns() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", r.GetRunId(), enumName(r.GetOutcome().String(), "BATCH_RUN_OUTCOME_"), r.GetCode(), r.GetMessage())
	}
	return tw.Flush()
}

func (c *cli) batchCancel(args []string) error {
	pos, err := c.parse(c.flags("batch cancel", true), args, "ID")
	if err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().CancelBatch(ctx, pos[0])
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	printBatch(c.stdout, res.GetBatch())
	return nil
}

func (c *cli) batchList(args []string) error {
	if _, err := c.parse(c.flags("batch list", true), args); err != nil {
		return err
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().ListBatches(ctx, &weftv1.ListBatchesRequest{PageSize: 1000})
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 2, 2, ' ', 0)
	fmt.Fprintln(tw, "BATCH\tOPERATION\tSTATE\tDONE\tTOTAL\tFAILED")
	for _, b := range res.GetBatches() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%d\t%d\n", b.GetBatchId(), strings.ToLower(enumName(b.GetOperation().String(), "BATCH_OPERATION_")),
			enumName(b.GetState().String(), "BATCH_STATE_"), b.GetDone(), b.GetTotal(), b.GetFailed())
	}
	return tw.Flush()
}

// printBatch prints a batch's summary.
func printBatch(w io.Writer, b *weftv1.Batch) {
	fmt.Fprintf(w, "batch %s: %s of %d runs, %s\n", b.GetBatchId(), strings.ToLower(enumName(b.GetOperation().String(), "BATCH_OPERATION_")),
		b.GetTotal(), enumName(b.GetState().String(), "BATCH_STATE_"))
	fmt.Fprintf(w, "done %d/%d (succeeded %d, failed %d, skipped %d) at most %g runs/s\n", b.GetDone(), b.GetTotal(),
		b.GetSucceeded(), b.GetFailed(), b.GetSkipped(), b.GetRate())
	if b.GetQuery() != "" {
		fmt.Fprintf(w, "query %s\n", b.GetQuery())
	}
	if b.GetOwner() != "" {
		fmt.Fprintf(w, "driven by %s\n", b.GetOwner())
	}
}
