package main

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
)

// citation matches a reference to a document a clone of this repository does
// not have: the specification's numbered documents, the design notes, and the
// folder they live in. The pattern is built from parts so that this file does
// not match it.
var citation = regexp.MustCompile(`\b` + "spec" + ` 00[0-9]|\b` + "DESIGN" + `\.md\b|(^|[^A-Za-z0-9_./-])` + "shared" + `/`)

// citationExempt lists the tracked files the citation check skips: this
// command's own tests, which hold examples of what it rejects.
var citationExempt = []string{"tools/weftlint/citations_test.go"}

// trackedFiles answers the files git tracks under dir, relative to it.
func trackedFiles(dir string) ([]string, error) {
	out, err := run(dir, "git", "ls-files", "-z")
	if err != nil {
		return nil, err
	}
	var files []string
	for f := range strings.SplitSeq(strings.TrimRight(string(out), "\x00"), "\x00") {
		if f != "" {
			files = append(files, f)
		}
	}
	return files, nil
}

// checkCitations reports every line of a tracked text file that cites a
// document outside the repository.
func checkCitations(dir string, files []string) ([]finding, error) {
	var out []finding
	for _, name := range files {
		if slices.Contains(citationExempt, name) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			if os.IsNotExist(err) {
				continue // deleted in the work tree, not yet in the index
			}
			return nil, err
		}
		out = append(out, citationsIn(name, data)...)
	}
	return out, nil
}

// citationsIn reports the citing lines of one file; binary files have none.
func citationsIn(name string, data []byte) []finding {
	if bytes.IndexByte(data, 0) >= 0 {
		return nil
	}
	var out []finding
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 0, 64*1024), len(data)+1)
	for line := 1; sc.Scan(); line++ {
		if m := citation.FindString(sc.Text()); m != "" {
			out = append(out, finding{check: "citations", where: fmt.Sprintf("%s:%d", name, line),
				msg: fmt.Sprintf("cites %q, which is not in this repository: state the rule in docs/semantics.md and cite docs/semantics.md#anchor", strings.TrimLeft(m, " (`'\"\t"))})
		}
	}
	return out
}
