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
	"unicode"
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

// docRef matches a reference to an anchor of a document in docs/:
// docs/semantics.md#signal-idempotency, or semantics.md#… from inside docs/.
var docRef = regexp.MustCompile(`(?:docs/)?([a-z][a-z0-9_-]*\.md)#([A-Za-z0-9_-]+)`)

// anchorID matches an explicit anchor: <a id="…">.
var anchorID = regexp.MustCompile(`<a id="([A-Za-z0-9_-]+)"`)

// checkAnchors reports every reference to an anchor of a document in docs/
// that the document does not have (neither an explicit <a id> nor a heading
// whose slug it is).
func checkAnchors(dir string, files []string) ([]finding, error) {
	anchors := map[string]map[string]bool{} // docs file name → its anchors
	for _, name := range files {
		if filepath.Dir(name) != "docs" || filepath.Ext(name) != ".md" {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			if os.IsNotExist(err) {
				continue
			}
			return nil, err
		}
		anchors[filepath.Base(name)] = anchorsOf(data)
	}
	var out []finding
	for _, name := range files {
		if slices.Contains(citationExempt, name) {
			continue
		}
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil || bytes.IndexByte(data, 0) >= 0 {
			continue
		}
		for i, line := range strings.Split(string(data), "\n") {
			for _, m := range docRef.FindAllStringSubmatch(line, -1) {
				have, ok := anchors[m[1]]
				if !ok || have[m[2]] || m[2] == "anchor" {
					continue
				}
				out = append(out, finding{check: "citations", where: fmt.Sprintf("%s:%d", name, i+1),
					msg: fmt.Sprintf("cites docs/%s#%s, which has no such anchor: add <a id=%q></a> where the rule is stated", m[1], m[2], m[2])})
			}
		}
	}
	return out, nil
}

// anchorsOf answers a Markdown document's anchors: its explicit <a id>s and
// its headings' slugs (lower case, punctuation dropped, spaces as hyphens).
func anchorsOf(md []byte) map[string]bool {
	out := map[string]bool{}
	for _, m := range anchorID.FindAllSubmatch(md, -1) {
		out[string(m[1])] = true
	}
	for _, line := range strings.Split(string(md), "\n") {
		if title, ok := strings.CutPrefix(strings.TrimLeft(line, "#"), " "); ok && strings.HasPrefix(line, "#") {
			out[slug(title)] = true
		}
	}
	return out
}

// slug answers a heading's anchor as Markdown renderers make it.
func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(title)) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9', r == '-', r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		case r > 127 && unicode.IsLetter(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}
