package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"slices"
	"strings"
)

// rule is one row of the import rules.
type rule struct {
	// pkg is the package pattern the row applies to.
	pkg string
	// allow lists the only patterns the package's own (non-test) files may
	// import directly; nil allows anything.
	allow []string
	// deny lists patterns the package must never reach, through any chain
	// of imports, from its own files or from its tests.
	deny []string
}

// exception is an import that breaks a rule today and is to be removed.
type exception struct {
	pkg     string // the importing package (module-relative)
	imports string // the pattern it reaches
	tests   bool   // only from its tests
	why     string
}

// pkg is what go list says of one package.
type pkg struct {
	ImportPath   string
	Name         string
	Dir          string
	GoFiles      []string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Standard     bool
	Error        *struct{ Err string }
}

// listPackages answers the module's packages and its path.
func listPackages(dir string) ([]pkg, string, error) {
	mod, err := run(dir, "go", "list", "-m")
	if err != nil {
		return nil, "", err
	}
	raw, err := run(dir, "go", "list", "-e", "-json=ImportPath,Name,Dir,GoFiles,Imports,TestImports,XTestImports,Standard,Error", "./...")
	if err != nil {
		return nil, "", err
	}
	var pkgs []pkg
	dec := json.NewDecoder(bytes.NewReader(raw))
	for {
		var p pkg
		if err := dec.Decode(&p); errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, "", fmt.Errorf("decode go list: %w", err)
		}
		if p.Error != nil {
			return nil, "", fmt.Errorf("go list %s: %s", p.ImportPath, p.Error.Err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs, strings.TrimSpace(string(mod)), nil
}

func run(dir, name string, args ...string) ([]byte, error) {
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("%s %s: %w: %s", name, strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return out, nil
}

// graph is the module's import graph, by full import path.
type graph struct {
	module string
	deps   map[string][]string // a module package's non-test imports
}

// rel answers path relative to the module, and whether it is in it.
func (g graph) rel(path string) (string, bool) {
	if path == g.module {
		return "", true
	}
	r, ok := strings.CutPrefix(path, g.module+"/")
	return r, ok
}

// matches reports whether import path matches pattern (see rules.go).
func (g graph) matches(pattern, path string) bool {
	if pattern == std {
		first, _, _ := strings.Cut(path, "/")
		return !strings.Contains(first, ".")
	}
	first, _, _ := strings.Cut(pattern, "/")
	if !strings.Contains(first, ".") && pattern != "..." {
		pattern = g.module + "/" + pattern
	} else if pattern == "..." {
		return true
	}
	if base, ok := strings.CutSuffix(pattern, "/..."); ok {
		return path == base || strings.HasPrefix(path, base+"/")
	}
	return path == pattern
}

// ruleFor answers the first row whose pattern matches the package.
func (g graph) ruleFor(table []rule, path string) (rule, bool) {
	for _, r := range table {
		if g.matches(r.pkg, path) {
			return r, true
		}
	}
	return rule{}, false
}

// reach answers every package reachable from roots (roots included), each
// with the chain of imports that first reached it.
func (g graph) reach(roots []string) map[string][]string {
	via := map[string][]string{}
	queue := make([]string, 0, len(roots))
	for _, r := range roots {
		if _, seen := via[r]; !seen {
			via[r] = []string{r}
			queue = append(queue, r)
		}
	}
	for len(queue) > 0 {
		p := queue[0]
		queue = queue[1:]
		for _, d := range g.deps[p] {
			if _, seen := via[d]; !seen {
				via[d] = append(slices.Clone(via[p]), d)
				queue = append(queue, d)
			}
		}
	}
	return via
}

// checkImports checks every package against its rule.
func checkImports(pkgs []pkg, module string, table []rule, known []exception) []finding {
	g := graph{module: module, deps: map[string][]string{}}
	for _, p := range pkgs {
		g.deps[p.ImportPath] = p.Imports
	}
	var out []finding
	used := make([]bool, len(known))
	for _, p := range pkgs {
		name, _ := g.rel(p.ImportPath)
		r, ok := g.ruleFor(table, p.ImportPath)
		if !ok {
			out = append(out, finding{check: "imports", where: name, msg: "no import rule names this package: add a row to tools/weftlint/rules.go and a Layering paragraph to its doc.go"})
			continue
		}
		out = append(out, g.checkAllow(name, r, p.Imports)...)
		for _, f := range g.checkDeny(name, r, p) {
			if i := matchException(g, known, name, f); i >= 0 {
				used[i] = true
				f.warning, f.msg = true, f.msg+" (pending: "+known[i].why+")"
			}
			out = append(out, f)
		}
	}
	for i, e := range known {
		if !used[i] {
			out = append(out, finding{check: "imports", where: e.pkg, warning: true,
				msg: fmt.Sprintf("the pending exception for %s no longer happens: delete it from tools/weftlint/rules.go", e.imports)})
		}
	}
	return out
}

// denial is the detail of a deny finding that an exception is matched on.
type denial struct {
	target string
	tests  bool
}

func (g graph) checkAllow(name string, r rule, imports []string) []finding {
	if r.allow == nil {
		return nil
	}
	var out []finding
	for _, imp := range imports {
		if !slices.ContainsFunc(r.allow, func(a string) bool { return g.matches(a, imp) }) {
			out = append(out, finding{check: "imports", where: name,
				msg: fmt.Sprintf("imports %s, which its rule (%s in tools/weftlint/rules.go) does not allow; if the layering changed, change the rule and the package's doc.go together", imp, r.pkg)})
		}
	}
	return out
}

func (g graph) checkDeny(name string, r rule, p pkg) []finding {
	if len(r.deny) == 0 {
		return nil
	}
	var out []finding
	report := func(roots []string, tests bool) {
		for target, chain := range g.reach(roots) {
			for _, d := range r.deny {
				if !g.matches(d, target) || target == p.ImportPath {
					continue
				}
				from := "its code"
				if tests {
					from = "its tests"
				}
				out = append(out, finding{check: "imports", where: name, detail: &denial{target: target, tests: tests},
					msg: fmt.Sprintf("%s reach %s (%s), which its rule (%s) denies", from, g.short(target), g.chain(chain), r.pkg)})
			}
		}
	}
	report(p.Imports, false)
	report(append(slices.Clone(p.TestImports), p.XTestImports...), true)
	slices.SortFunc(out, func(a, b finding) int { return strings.Compare(a.msg, b.msg) })
	return out
}

func (g graph) short(path string) string {
	if r, ok := g.rel(path); ok {
		return r
	}
	return path
}

func (g graph) chain(chain []string) string {
	parts := make([]string, len(chain))
	for i, c := range chain {
		parts[i] = g.short(c)
	}
	return "via " + strings.Join(parts, " → ")
}

// matchException answers the index of the exception that covers f, or -1.
func matchException(g graph, known []exception, name string, f finding) int {
	if f.detail == nil {
		return -1
	}
	for i, e := range known {
		if e.pkg == name && e.tests == f.detail.tests && g.matches(e.imports, f.detail.target) {
			return i
		}
	}
	return -1
}
