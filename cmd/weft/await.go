package main

import (
	"fmt"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

func (c *cli) await(args []string) error {
	fs := c.flags("await", true)
	quiet := fs.Bool("quiet", false, "print only the run's status")
	fs.BoolVar(quiet, "q", false, "print only the run's status")
	pos, err := c.parse(fs, args, "RUN")
	if err != nil {
		return err
	}
	return c.awaitAndPrint(pos[0], *quiet)
}

// awaitAndPrint waits for a run to end (RunService.AwaitRun, called again
// for as long as the run goes on: the command's own context is its only
// deadline), prints it, and answers nil when it ended COMPLETED, else a
// *runEnded error: exit code 1. quiet prints only the run id.
func (c *cli) awaitAndPrint(runID string, quiet bool) error {
	run, err := c.client().AwaitRun(c.ctx, runID)
	if err != nil {
		return err
	}
	switch {
	case quiet:
		fmt.Fprintln(c.stdout, run.GetRunId())
	case c.g.output == "json":
		if err := printJSON(c.stdout, &weftv1.AwaitRunResponse{Run: run}); err != nil {
			return err
		}
	default:
		printRun(c.stdout, run)
	}
	if run.GetStatus() != weftv1.RunStatus_RUN_STATUS_COMPLETED {
		return &runEnded{run: run}
	}
	return nil
}

// runEnded is a run that ended other than COMPLETED: weft await and
// weft submit --wait exit 1 with it.
type runEnded struct{ run *weftv1.Run }

func (e *runEnded) Error() string {
	msg := fmt.Sprintf("run %s ended %s", e.run.GetRunId(), enumName(e.run.GetStatus().String(), "RUN_STATUS_"))
	if m := e.run.GetMessage(); m != "" {
		msg += ": " + m
	}
	return msg
}
