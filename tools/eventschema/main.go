// Command eventschema writes docs/events/<EventType>.schema.json from the
// proto descriptors (internal/eventschema); `make gen` runs it.
package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/weft-dev/weft/internal/eventschema"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "eventschema:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) != 2 {
		return fmt.Errorf("usage: eventschema <dir>")
	}
	dir := os.Args[1]
	files, err := eventschema.Generate()
	if err != nil {
		return err
	}
	stale, err := filepath.Glob(filepath.Join(dir, "*.schema.json"))
	if err != nil {
		return err
	}
	for _, f := range stale {
		if err := os.Remove(f); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(dir, name), body, 0o644); err != nil {
			return err
		}
	}
	return nil
}
