package main

import (
	"errors"
	"flag"
	"fmt"
	"strings"
)

// errUsage marks a usage error (exit code 2).
var errUsage = errors.New("usage")

// errHelp marks a request for a command's help (-h, --help): printed on
// stdout, exit code 0.
var errHelp = errors.New("help requested")

// usageError answers a usage error with a message.
func usageError(format string, args ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, args...))
}

// parseInterspersed parses fs allowing flags before, between and after
// positional arguments, and answers the positional ones.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, errHelp
			}
			return nil, fmt.Errorf("%w: %v", errUsage, err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// wantArgs checks the number of positional arguments.
func wantArgs(pos []string, names ...string) error {
	if len(pos) != len(names) && len(names) == 0 {
		return usageError("takes no arguments, got %d", len(pos))
	}
	if len(pos) != len(names) {
		return usageError("want %s, got %d argument(s)", strings.Join(names, " "), len(pos))
	}
	for i, p := range pos {
		if strings.TrimSpace(p) == "" {
			return usageError("%s must not be empty", names[i])
		}
	}
	return nil
}
