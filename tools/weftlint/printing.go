package main

import (
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"path/filepath"
	"strconv"
)

// forbiddenPrint lists, per standard package, the functions library code
// must not call; an empty list forbids every use of the package.
var forbiddenPrint = map[string][]string{
	"log": nil,
	"fmt": {"Print", "Printf", "Println"},
}

// checkPrinting reports package-level printing in library code: every
// package but package main, tests excepted.
func checkPrinting(pkgs []pkg) ([]finding, error) {
	var out []finding
	fset := token.NewFileSet()
	for _, p := range pkgs {
		if p.Name == "main" {
			continue
		}
		for _, name := range p.GoFiles {
			path := filepath.Join(p.Dir, name)
			f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
			if err != nil {
				return nil, fmt.Errorf("parse %s: %w", path, err)
			}
			out = append(out, printsIn(fset, f)...)
		}
	}
	return out, nil
}

// printsIn reports the forbidden uses in one file.
func printsIn(fset *token.FileSet, f *ast.File) []finding {
	local := map[string]string{} // local name → import path, for the forbidden packages
	for _, imp := range f.Imports {
		path, _ := strconv.Unquote(imp.Path.Value)
		if _, ok := forbiddenPrint[path]; !ok {
			continue
		}
		name := filepath.Base(path)
		if imp.Name != nil {
			name = imp.Name.Name
		}
		local[name] = path
	}
	if len(local) == 0 {
		return nil
	}
	var out []finding
	ast.Inspect(f, func(n ast.Node) bool {
		sel, ok := n.(*ast.SelectorExpr)
		if !ok {
			return true
		}
		id, ok := sel.X.(*ast.Ident)
		if !ok {
			return true
		}
		path, ok := local[id.Name]
		if !ok || !forbidden(path, sel.Sel.Name) {
			return true
		}
		pos := fset.Position(sel.Pos())
		out = append(out, finding{check: "printing", where: fmt.Sprintf("%s:%d", pos.Filename, pos.Line),
			msg: fmt.Sprintf("%s.%s in library code: return an error or log through an injected *slog.Logger", path, sel.Sel.Name)})
		return true
	})
	return out
}

func forbidden(path, fn string) bool {
	names := forbiddenPrint[path]
	if names == nil {
		return true
	}
	for _, n := range names {
		if n == fn {
			return true
		}
	}
	return false
}
