// Package console holds the web console's built assets (dist/, built from
// src/ by `make console` and committed like generated code) for weftd to
// serve at /ui/. docs/console.md describes the console.
//
// Layering: it imports the standard library only.
package console

import (
	"embed"
	"io/fs"
)

//go:embed dist
var dist embed.FS

// Assets answers the built console: index.html, app.js and app.css.
func Assets() fs.FS {
	sub, err := fs.Sub(dist, "dist")
	if err != nil {
		panic(err) // the directory is embedded above; it cannot be missing
	}
	return sub
}
