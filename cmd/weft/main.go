// Command weft is Weft's command-line client. It talks to weftd over the
// public API only, through the Go SDK (client/).
//
//	weft [global flags] COMMAND [arguments] [flags]
//
//	health                          report whether each weft.v1 service is serving
//	submit FILE                     submit a workflow (YAML, docs/definitions.md, or the API's JSON WorkflowDefinition)
//	start RUN                       start a PENDING or APPROVED run
//	approve RUN                     approve a run that requires approval
//	get RUN                         show a run, what it waits for, and its steps
//	list                            list runs, newest first, with what each waits for
//	events RUN                      show a run's events (--watch to follow)
//	signal RUN NAME                 send a signal (refused when no step waits for NAME; --any-name)
//	complete RUN ACTION             complete a manual step
//	pause RUN | resume RUN | cancel RUN
//	retry-step RUN ACTION | skip-step RUN ACTION
//	delete RUN                      delete a finished run and all its records
//	workers | queue NAME            the queues, their pollers and backlog
//	schedule SUBCOMMAND             create|update|list|describe|pause|resume|trigger|backfill|delete
//	help [COMMAND]                  the commands, or one command's flags (also COMMAND --help)
//
// Global flags, accepted before or after the command: --addr (default
// $WEFT_URL, then http://127.0.0.1:7400; an http:// or https:// URL), --token
// (default $WEFT_TOKEN; sent as a bearer token), --output/-o table|json
// (readable tables by default; json is the API's proto JSON with proto field
// names, one event per line for events). In `complete`, --output is the
// step's output and --token the completion token: there -o selects the
// format, and the bearer token goes before the command (weft --token T
// complete …) or in $WEFT_TOKEN.
//
// Help (weft, weft help, --help) prints on stdout. Exit codes: 0 success,
// 1 an API or connection error (the fault code, message and correlation id
// are printed; never a payload) or an invalid workflow file, 2 a usage error
// (with the command's usage line). `submit --start` prints the run's id
// whenever the run was created, also when its start is refused.
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
var services = []string{"weft.v1.RunService", "weft.v1.SignalService", "weft.v1.EventService", "weft.v1.WorkerService", "weft.v1.ScheduleService", "weft.v1.DefinitionService"}

// run executes one command and answers the exit code: 0 success (help
// asked for included), 1 an API, connection or input-file error, 2 a usage
// error.
func run(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) (int, error) {
	g := &globals{}
	fs := flag.NewFlagSet("weft", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	g.register(fs, getenv, true)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			printUsage(stdout)
			return 0, nil
		}
		printUsage(stderr)
		return 2, fmt.Errorf("%w: %v", errUsage, err)
	}
	if fs.NArg() == 0 {
		printUsage(stdout)
		return 0, nil
	}
	if fs.Arg(0) == "help" {
		return help(fs.Args()[1:], stdout, stderr)
	}
	cmd := commandNamed(fs.Arg(0))
	if cmd == nil {
		printUsage(stderr)
		return 2, fmt.Errorf("%w: unknown command %q", errUsage, fs.Arg(0))
	}
	c := &cli{ctx: ctx, g: g, getenv: getenv, stdout: stdout, stderr: stderr, cmd: cmd}
	return c.exit(cmd.run(c, fs.Args()[1:]))
}

// exit answers a command's exit code, printing its help or usage line where
// the error asks for one.
func (c *cli) exit(err error) (int, error) {
	switch {
	case err == nil:
		return 0, nil
	case errors.Is(err, errHelp):
		c.printHelp(c.stdout)
		return 0, nil
	case errors.Is(err, errUsage):
		return 2, fmt.Errorf("%w\nusage: %s (weft %s --help lists its flags)", err, c.cmd.usageLine(), c.cmd.name)
	default:
		return 1, withHint(err, c.g.baseURL())
	}
}

// help answers `weft help [COMMAND [SUBCOMMAND]]`: the usage, or one
// command's help, on stdout.
func help(args []string, stdout, stderr io.Writer) (int, error) {
	if len(args) == 0 || strings.HasPrefix(args[0], "-") {
		printUsage(stdout)
		return 0, nil
	}
	cmd := commandNamed(args[0])
	if cmd == nil {
		printUsage(stderr)
		return 2, fmt.Errorf("%w: unknown command %q", errUsage, args[0])
	}
	helpArgs := append(args[1:len(args):len(args)], "--help")
	return run(context.Background(), append([]string{cmd.name}, helpArgs...), func(string) string { return "" }, stdout, stderr)
}

func printUsage(w io.Writer) {
	fmt.Fprintln(w, "usage: weft [--addr URL] [--token T] [--output table|json] COMMAND [arguments] [flags]")
	fmt.Fprintln(w, "\ncommands:")
	for _, c := range commands {
		fmt.Fprintf(w, "  %-11s %-11s %s\n", c.name, c.args, c.summary)
	}
	fmt.Fprintln(w, "\nweft help COMMAND (or weft COMMAND --help) shows a command's flags.")
	fmt.Fprintln(w, "environment: WEFT_URL (default http://127.0.0.1:7400), WEFT_TOKEN, WEFT_CA_CERT, WEFT_CLIENT_CERT, WEFT_CLIENT_KEY")
	fmt.Fprintln(w, "exit codes: 0 success, 1 an API or connection error or an invalid workflow file, 2 a usage error")
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
