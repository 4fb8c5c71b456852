package main

import (
	"fmt"
	"slices"
	"strings"
)

// checkDirectRequires finds the modules the module's own packages (tests
// included) import from that go.mod marks "// indirect": a module the code
// imports is a direct requirement, and go.mod says so (go mod tidy's rule),
// so that reading go.mod tells what the code depends on.
func checkDirectRequires(dir string) ([]finding, error) {
	raw, err := run(dir, "go", "list", "-e", "-deps", "-test",
		"-f", "{{.ImportPath}}\t{{with .Module}}{{.Path}}\t{{.Main}}\t{{.Indirect}}{{end}}\t{{join .Imports \" \"}}", "./...")
	if err != nil {
		return nil, err
	}
	type pkgInfo struct {
		module         string
		main, indirect bool
		imports        []string
	}
	pkgs := map[string]pkgInfo{}
	for line := range strings.SplitSeq(strings.TrimSpace(string(raw)), "\n") {
		f := strings.Split(line, "\t")
		if len(f) != 5 {
			continue // a standard library package: no module
		}
		pkgs[f[0]] = pkgInfo{module: f[1], main: f[2] == "true", indirect: f[3] == "true", imports: strings.Fields(f[4])}
	}
	var out []finding
	seen := map[string]bool{}
	for path, p := range pkgs {
		if !p.main {
			continue
		}
		for _, im := range p.imports {
			dep, ok := pkgs[im]
			if !ok || dep.main || !dep.indirect || seen[dep.module] {
				continue
			}
			seen[dep.module] = true
			out = append(out, finding{check: "modules", where: "go.mod",
				msg: fmt.Sprintf("%s is imported by %s but marked // indirect: list it as a direct requirement", dep.module, strings.TrimSuffix(path, ".test"))})
		}
	}
	slices.SortFunc(out, func(a, b finding) int { return strings.Compare(a.msg, b.msg) })
	return out, nil
}
