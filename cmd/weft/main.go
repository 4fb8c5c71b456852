// Command weft is Weft's command-line client. It talks to weftd over the
// public API only, through the Go SDK (client/).
//
//	weft [global flags] COMMAND [arguments] [flags]
//
//	health                          report whether each weft.v1 service is serving
//	submit FILE                     submit a workflow (YAML, docs/semantics.md#yaml-definitions, or the API's JSON WorkflowDefinition)
//	start RUN                       start a PENDING or APPROVED run
//	approve RUN                     approve a run that requires approval
//	get RUN                         show a run and its steps
//	list                            list runs, newest first
//	events RUN                      show a run's events (--watch to follow)
//	signal RUN NAME                 send a signal
//	complete RUN ACTION             complete a manual step
//	pause RUN | resume RUN | cancel RUN
//	retry-step RUN ACTION | skip-step RUN ACTION
//	delete RUN                      delete a finished run and all its records
//
// Global flags, accepted before or after the command: --addr (default
// $WEFT_URL, then http://127.0.0.1:7400), --token (default $WEFT_TOKEN; sent
// as a bearer token), --output/-o table|json (readable tables by default;
// json is the API's proto JSON with proto field names, one event per line for
// events). In `complete`, --output is the step's output and --token the
// completion token: there -o selects the format, and the bearer token goes
// before the command (weft --token T complete …) or in $WEFT_TOKEN.
//
// Exit codes: 0 success, 1 an API or connection error (the fault code,
// message and correlation id are printed; never a payload), 2 a usage error.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

func main() {
	code, err := run(context.Background(), os.Args[1:], os.Getenv, os.Stdout, os.Stderr)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weft:", err)
	}
	os.Exit(code)
}

// services are the services `weft health` checks.
var services = []string{"weft.v1.RunService", "weft.v1.SignalService", "weft.v1.EventService", "weft.v1.WorkerService", "weft.v1.ScheduleService"}

// run executes one command and answers the exit code.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (int, error) {
	g := &globals{}
	fs := flag.NewFlagSet("weft", flag.ContinueOnError)
	fs.SetOutput(stderr)
	g.register(fs, getenv, true)
	fs.Usage = func() { printUsage(stderr) }
	if err := fs.Parse(args); err != nil {
		return 2, nil
	}
	if fs.NArg() == 0 {
		printUsage(stderr)
		return 2, nil
	}
	cmd := commandNamed(fs.Arg(0))
	if cmd == nil {
		printUsage(stderr)
		return 2, fmt.Errorf("unknown command %q", fs.Arg(0))
	}
	c := &cli{ctx: ctx, g: g, getenv: getenv, stdout: stdout, stderr: stderr}
	err := cmd.run(c, fs.Args()[1:])
	switch {
	case err == nil:
		return 0, nil
	case errors.Is(err, errUsage):
		fmt.Fprintf(stderr, "usage: weft %s %s\n", cmd.name, cmd.args)
		return 2, err
	default:
		return 1, err
	}
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: weft [--addr URL] [--token T] [--output table|json] COMMAND [arguments] [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %-28s %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintln(w, "\nenvironment: WEFT_URL (default http://127.0.0.1:7400), WEFT_TOKEN, WEFT_CA_CERT, WEFT_CLIENT_CERT, WEFT_CLIENT_KEY")
}

// globals are the flags every command accepts.
type globals struct {
	addr, token, output string
	tls                 tlsFlags
}

// register adds the global flags to fs. complete passes false: its --output
// is the step's output and its --token the completion token, so there only
// -o selects the format and the bearer token comes before the command or
// from $WEFT_TOKEN.
func (g *globals) register(fs *flag.FlagSet, getenv func(string) string, all bool) {
	g.tls.register(fs, getenv, g.addr == "")
	if g.addr == "" {
		g.addr = envOr(getenv("WEFT_URL"), "http://127.0.0.1:7400")
		g.token = getenv("WEFT_TOKEN")
		g.output = "table"
	}
	fs.StringVar(&g.addr, "addr", g.addr, "weftd base URL ($WEFT_URL)")
	if all {
		fs.StringVar(&g.token, "token", g.token, "bearer token ($WEFT_TOKEN)")
		fs.StringVar(&g.output, "output", g.output, "output format: table or json")
	}
	fs.StringVar(&g.output, "o", g.output, "output format: table or json")
}

func envOr(v, fallback string) string {
	if v != "" {
		return v
	}
	return fallback
}

// baseURL answers the address without a trailing slash.
func (g *globals) baseURL() string { return strings.TrimRight(g.addr, "/") }
