package engine

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

const module = "github.com/weft-dev/weft/"

// allowedWeftImports is, for each package under engine/ with rules of its
// own, the module's packages it may import (its doc.go states the rule);
// the standard library and third-party modules are not restricted here.
var allowedWeftImports = map[string][]string{
	"definition": {"engine/expr"},
	"runstate":   {"engine/definition"},
	"eventpb":    {"engine/definition", "engine/runstate", "internal/protorules", "internal/jsonvalue", "gen/"},
}

// TestImports_NoEnginePackageImportsServerAndThePureOnesStayPure parses every
// Go file under engine/, tests included: none may import the server (the
// engine sits below it), and definition, runstate and eventpb import only
// what their doc.go allows (their tests may use the test kit,
// internal/testkit).
func TestImports_NoEnginePackageImportsServerAndThePureOnesStayPure(t *testing.T) {
	fset := token.NewFileSet()
	err := filepath.WalkDir(".", func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".go") {
			return err
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		pkg := strings.Split(filepath.ToSlash(filepath.Dir(path)), "/")[0]
		allowed, restricted := allowedWeftImports[pkg]
		for _, im := range f.Imports {
			p, _ := strconv.Unquote(im.Path.Value)
			if p == module+"server" || strings.HasPrefix(p, module+"server/") {
				t.Errorf("%s imports %s: no engine package may import the server", path, p)
			}
			testHelper := strings.HasSuffix(path, "_test.go") && strings.HasPrefix(p, module+"internal/testkit/")
			if restricted && strings.HasPrefix(p, module) && !testHelper && !permitted(strings.TrimPrefix(p, module), allowed) {
				t.Errorf("%s imports %s, which engine/%s may not import", path, p, pkg)
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func permitted(p string, allowed []string) bool {
	for _, a := range allowed {
		if p == a || strings.HasSuffix(a, "/") && strings.HasPrefix(p, a) {
			return true
		}
	}
	return false
}
