package main

import (
	"go/parser"
	"go/token"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestPrintsIn_ForbiddenAndAllowed(t *testing.T) {
	for _, tc := range []struct {
		name, src string
		want      int
	}{
		{"fmt.Println", `package p; import "fmt"; func f() { fmt.Println("x") }`, 1},
		{"fmt.Printf", `package p; import "fmt"; func f() { fmt.Printf("x") }`, 1},
		{"fmt.Print", `package p; import "fmt"; func f() { fmt.Print("x") }`, 1},
		{"renamed fmt", `package p; import f "fmt"; func g() { f.Println("x") }`, 1},
		{"log.Printf", `package p; import "log"; func f() { log.Printf("x") }`, 1},
		{"log.New", `package p; import "log"; var l = log.New(nil, "", 0)`, 1},
		{"fmt.Errorf and Fprintf", `package p; import ("fmt"; "io"); func f(w io.Writer) error { fmt.Fprintf(w, "x"); return fmt.Errorf("x") }`, 0},
		{"slog", `package p; import "log/slog"; func f() { slog.Info("x") }`, 0},
		{"a local named fmt", `package p; type t struct{}; func (t) Println() {}; func f() { var fmt t; fmt.Println() }`, 0},
	} {
		fset := token.NewFileSet()
		f, err := parser.ParseFile(fset, "x.go", tc.src, 0)
		require.NoError(t, err, tc.name)
		require.Len(t, printsIn(fset, f), tc.want, tc.name)
	}
}
