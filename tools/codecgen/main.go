// Command codecgen writes engine/runcodec's field tables — each stored
// message's binary encoder and decoder, and the JSON field tables of the
// messages an event holds — from the wire and json tags of
// engine/runstate's types, so that a field is added by adding it to its
// type: `make gen` runs it (go generate in engine/runcodec) and `make
// gen-check` fails when the file is stale. A wire tag is the field's
// number, and may add a compact form (",uuid=N": a canonical lowercase
// UUID stored as its 16 bytes in field N; ",sha256=N": 64 lowercase hex
// digits as their 32 bytes) or store an integer less another field
// (",offset=From"); "-" leaves a field unstored. A field without a wire
// tag, a number used twice, or a type or JSON option the codec cannot
// write is an error naming the field.
package main

import (
	"fmt"
	"go/format"
	"os"
	"reflect"

	"github.com/weft-dev/weft/engine/runstate"
)

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: codecgen engine/runcodec/fields_gen.go")
		os.Exit(2)
	}
	if err := run(os.Args[1]); err != nil {
		fmt.Fprintln(os.Stderr, "codecgen:", err)
		os.Exit(1)
	}
}

func run(out string) error {
	m := newModel()
	// The event first: its messages get JSON tables (the event bus's JSON,
	// written from the stored form).
	if _, err := m.add(reflect.TypeFor[runstate.Event](), true); err != nil {
		return err
	}
	if _, err := m.add(reflect.TypeFor[runstate.State](), false); err != nil {
		return err
	}
	src, err := format.Source(source(m, "tools/codecgen"))
	if err != nil {
		return fmt.Errorf("formatting the generated code: %w", err)
	}
	return os.WriteFile(out, src, 0o644)
}
