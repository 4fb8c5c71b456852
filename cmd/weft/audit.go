package main

import (
	"fmt"
	"io"
	"text/tabwriter"
	"time"

	"google.golang.org/protobuf/types/known/timestamppb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// audit prints a page of the tenant's audit log, newest first (admin).
func (c *cli) audit(args []string) error {
	fs := c.flags("audit", true)
	principal := fs.String("principal", "", "only this principal's calls")
	procedure := fs.String("procedure", "", `only this procedure, e.g. /weft.v1.RunService/CancelRun`)
	target := fs.String("target", "", `only calls on this target, e.g. run:RUN`)
	outcome := fs.String("outcome", "", "only this outcome: ok, permission_denied, not_found, …")
	since := fs.Duration("since", 0, "only calls in this last while, e.g. 24h")
	limit := fs.Uint("limit", 0, "at most this many records (default 100, max 1000)")
	page := fs.String("page-token", "", "the next page token of a previous audit")
	if _, err := c.parse(fs, args); err != nil {
		return err
	}
	req := &weftv1.ListAuditEventsRequest{Principal: *principal, Procedure: *procedure, Target: *target,
		Outcome: *outcome, PageSize: uint32(min(*limit, 1000)), PageToken: *page}
	if *since > 0 {
		req.Since = timestamppb.New(time.Now().Add(-*since))
	}
	ctx, cancel := c.callCtx()
	defer cancel()
	res, err := c.client().ListAuditEvents(ctx, req)
	if err != nil {
		return err
	}
	if c.g.output == "json" {
		return printJSON(c.stdout, res)
	}
	printAudit(c.stdout, res)
	return nil
}

func printAudit(w io.Writer, res *weftv1.ListAuditEventsResponse) {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "TIME\tPRINCIPAL\tAUTH\tPROCEDURE\tTARGET\tOUTCOME\tCORRELATION")
	for _, e := range res.GetEvents() {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", when(e.GetTime()), e.GetPrincipal(), e.GetAuthMethod(),
			e.GetProcedure(), e.GetTarget(), e.GetOutcome(), e.GetCorrelationId())
	}
	_ = tw.Flush()
	if t := res.GetNextPageToken(); t != "" {
		fmt.Fprintf(w, "more: --page-token %s\n", t)
	}
}
