package main

import (
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"
)

// allChecks names every check, in the order they run.
var allChecks = []string{"imports", "layering", "printing", "citations", "modules"}

func main() {
	only := flag.String("checks", strings.Join(allChecks, ","), "the checks to run, comma-separated: "+strings.Join(allChecks, ", "))
	flag.Parse()
	checks := strings.Split(*only, ",")
	for _, c := range checks {
		if !slices.Contains(allChecks, c) {
			fmt.Fprintf(os.Stderr, "weftlint: -checks: unknown check %q (known: %s)\n", c, strings.Join(allChecks, ", "))
			os.Exit(2)
		}
	}
	findings, err := lint(".", checks)
	if err != nil {
		fmt.Fprintln(os.Stderr, "weftlint:", err)
		os.Exit(2)
	}
	failed := false
	for _, f := range findings {
		fmt.Println(f)
		failed = failed || !f.warning
	}
	if failed {
		os.Exit(1)
	}
}

// lint runs the named checks on the module rooted at dir.
func lint(dir string, checks []string) ([]finding, error) {
	pkgs, module, err := listPackages(dir)
	if err != nil {
		return nil, err
	}
	var out []finding
	if slices.Contains(checks, "imports") {
		out = append(out, checkImports(pkgs, module, rules, pending)...)
	}
	if slices.Contains(checks, "layering") {
		docs, err := checkLayeringDocs(pkgs, module)
		if err != nil {
			return nil, err
		}
		out = append(out, docs...)
	}
	if slices.Contains(checks, "printing") {
		prints, err := checkPrinting(pkgs)
		if err != nil {
			return nil, err
		}
		out = append(out, prints...)
	}
	if slices.Contains(checks, "citations") {
		files, err := trackedFiles(dir)
		if err != nil {
			return nil, err
		}
		cites, err := checkCitations(dir, files)
		if err != nil {
			return nil, err
		}
		out = append(out, cites...)
		missing, err := checkAnchors(dir, files)
		if err != nil {
			return nil, err
		}
		out = append(out, missing...)
	}
	if slices.Contains(checks, "modules") {
		mods, err := checkDirectRequires(dir)
		if err != nil {
			return nil, err
		}
		out = append(out, mods...)
	}
	return out, nil
}

// finding is one broken rule (or, when warning is set, one to look at).
type finding struct {
	check   string // imports, layering, printing, citations or modules
	where   string // a package or file:line
	msg     string
	warning bool
	detail  *denial // set on deny findings
}

func (f finding) String() string {
	level := "error"
	if f.warning {
		level = "warning"
	}
	return fmt.Sprintf("%s: %s: %s: %s", level, f.check, f.where, f.msg)
}
