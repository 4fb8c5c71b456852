package main

import (
	"fmt"
	"go/parser"
	"go/token"
	"path/filepath"
	"strings"
)

// checkLayeringDocs reports every library package (not package main, not
// generated code) whose package comment does not state what it may import:
// the rule a reader looks for before rules.go.
func checkLayeringDocs(pkgs []pkg, module string) ([]finding, error) {
	var out []finding
	g := graph{module: module}
	fset := token.NewFileSet()
	for _, p := range pkgs {
		name, _ := g.rel(p.ImportPath)
		if p.Name == "main" || g.matches("gen/...", p.ImportPath) {
			continue
		}
		doc := ""
		for _, file := range p.GoFiles {
			f, err := parser.ParseFile(fset, filepath.Join(p.Dir, file), nil, parser.PackageClauseOnly|parser.ParseComments)
			if err != nil {
				return nil, fmt.Errorf("parse %s: %w", file, err)
			}
			if f.Doc != nil {
				doc += f.Doc.Text()
			}
		}
		if !statesImports(doc) {
			out = append(out, finding{check: "layering", where: name,
				msg: "its package comment (doc.go) does not say what it may import: add a \"Layering:\" paragraph that matches its row in tools/weftlint/rules.go"})
		}
	}
	return out, nil
}

// statesImports reports whether a package comment states an import rule.
func statesImports(doc string) bool {
	doc = strings.ToLower(doc)
	return strings.Contains(doc, "layering:") || strings.Contains(doc, "it imports") || strings.Contains(doc, "may import")
}
