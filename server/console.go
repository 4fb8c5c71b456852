package server

import (
	"net/http"

	"github.com/weft-dev/weft/console"
)

// ConsolePath is where weftd serves the web console (docs/console.md).
const ConsolePath = "/ui/"

// consoleCSP is the console's Content-Security-Policy: its own script and
// style only (no inline script or style element, no eval), calls to its own
// origin only, and no framing. docs/console.md#security explains it.
const consoleCSP = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; " +
	"connect-src 'self'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"

// mountConsole serves the console's embedded assets under ConsolePath with a
// strict Content-Security-Policy, and sends / there.
func mountConsole(mux *http.ServeMux) {
	files := http.StripPrefix(ConsolePath, http.FileServerFS(console.Assets()))
	mux.Handle("GET "+ConsolePath, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		h := w.Header()
		h.Set("Content-Security-Policy", consoleCSP)
		h.Set("X-Content-Type-Options", "nosniff")
		h.Set("Referrer-Policy", "no-referrer")
		h.Set("X-Frame-Options", "DENY")
		h.Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	}))
	mux.Handle("GET /ui", http.RedirectHandler(ConsolePath, http.StatusMovedPermanently))
	mux.Handle("GET /{$}", http.RedirectHandler(ConsolePath, http.StatusFound))
}
