package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/client"
)

// printHelp prints the running command's help: its usage line, what it
// does and its flags (the global ones last).
func (c *cli) printHelp(w io.Writer) {
	fmt.Fprintf(w, "usage: %s [flags]\n\n%s\n", c.cmd.usageLine(), c.cmd.summary)
	if c.fs == nil {
		return
	}
	var own, global []*flag.Flag
	c.fs.VisitAll(func(f *flag.Flag) {
		if isGlobalFlag(c.cmd.name, f.Name) {
			global = append(global, f)
		} else {
			own = append(own, f)
		}
	})
	printFlags(w, "flags", own)
	printFlags(w, "global flags", global)
}

// usageLine answers "weft NAME ARGS".
func (cmd *command) usageLine() string {
	return strings.TrimSpace("weft " + cmd.name + " " + cmd.args)
}

// isGlobalFlag reports whether name is one of the flags every command
// takes; complete's --token and --output are its own.
func isGlobalFlag(cmd, name string) bool {
	switch name {
	case "addr", "o":
		return true
	case "token", "output":
		return cmd != "complete"
	}
	return false
}

// printFlags lists flags as "  --name TYPE  usage (default …)".
func printFlags(w io.Writer, title string, flags []*flag.Flag) {
	if len(flags) == 0 {
		return
	}
	fmt.Fprintf(w, "\n%s:\n", title)
	for _, f := range flags {
		kind, usage := flag.UnquoteUsage(f)
		dash := "--"
		if len(f.Name) == 1 {
			dash = "-"
		}
		line := "  " + dash + f.Name
		if kind != "" {
			line += " " + kind
		}
		if def := f.DefValue; def != "" && def != "false" && def != "0" && def != "0s" {
			usage += fmt.Sprintf(" (default %q)", def)
		}
		fmt.Fprintf(w, "%-28s %s\n", line, usage)
	}
}

// withHint adds what to do to an error that says weftd cannot be reached.
func withHint(err error, base string) error {
	var e *client.Error
	if !errors.As(err, &e) || e.ConnectCode != connect.CodeUnavailable {
		return err
	}
	if msg := err.Error(); strings.Contains(msg, "connection refused") || strings.Contains(msg, "no such host") {
		return fmt.Errorf("%w\nweftd does not answer at %s: is it running? (make run starts one on 127.0.0.1:7400; --addr or $WEFT_URL names another)", err, base)
	}
	return err
}
