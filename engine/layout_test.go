package engine

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/internal/decide"
)

// maxMethods bounds the method set of any type of the engine's top level:
// what is not a type's own vocabulary is a plain function in the file of
// the call it serves.
const maxMethods = 30

// No type of engine/'s top level (its code, not its tests) has more than
// maxMethods methods, and the change a decision records keeps all of its
// methods in change.go, right after the type.
func TestLayout_NoTypeHasOverThirtyMethodsAndTheChangesAreTogether(t *testing.T) {
	files, err := filepath.Glob("*.go")
	require.NoError(t, err)
	fset := token.NewFileSet()
	methods := map[string]int{}
	for _, name := range files {
		if strings.HasSuffix(name, "_test.go") {
			continue
		}
		src, err := os.ReadFile(name)
		require.NoError(t, err)
		f, err := parser.ParseFile(fset, name, src, 0)
		require.NoError(t, err)
		for _, d := range f.Decls {
			fd, ok := d.(*ast.FuncDecl)
			if !ok || fd.Recv == nil {
				continue
			}
			typ := fd.Recv.List[0].Type
			if star, ok := typ.(*ast.StarExpr); ok {
				typ = star.X
			}
			switch g := typ.(type) { // a generic type's receiver: T[P] or T[P, Q]
			case *ast.IndexExpr:
				typ = g.X
			case *ast.IndexListExpr:
				typ = g.X
			}
			recv := typ.(*ast.Ident).Name
			methods[recv]++
			if recv == "change" {
				require.Equal(t, "change.go", name, "method change.%s belongs in change.go", fd.Name.Name)
			}
		}
	}
	for typ, n := range methods {
		require.LessOrEqual(t, n, maxMethods, "type %s has %d methods", typ, n)
	}
	require.NotZero(t, methods["Engine"])
}

// The rules' Recorder only writes: none of its methods answers a value
// but an illegal move's error or the ids of the task it made. What the
// rules need from the store reaches them in decide.Prepared.
func TestLayout_TheRulesRecorderOnlyWrites(t *testing.T) {
	rec := reflect.TypeFor[decide.Recorder]()
	errType := reflect.TypeFor[error]()
	for i := range rec.NumMethod() {
		m := rec.Method(i)
		switch {
		case m.Type.NumOut() == 0:
		case m.Type.NumOut() == 1 && m.Type.Out(0) == errType && strings.HasPrefix(m.Name, "Move"):
		case m.Name == "NewTask":
		default:
			t.Errorf("decide.Recorder.%s answers %s: a method that answers a value reads; prepare the value instead", m.Name, m.Type)
		}
	}
}
