// Package loop is the lowest layer of the test kit: an engine that runs
// until it is stopped, and a handler served on a loopback port. It imports
// neither the server nor the kit above it, so the server package's own
// tests start their engines and serve their handlers through it, as
// internal/testkit does for every other package.
//
// Layering: it may import the standard library, engine and testify; only
// tests (and internal/testkit) import it.
package loop

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
)

// Running is an engine running in the background.
type Running struct {
	Engine *engine.Engine
	stop   context.CancelFunc
	done   chan struct{}
}

// StartEngine makes an engine of cfg and runs it until Stop.
func StartEngine(cfg engine.Config) (*Running, error) {
	eng, err := engine.New(cfg)
	if err != nil {
		return nil, err
	}
	ctx, stop := context.WithCancel(context.Background())
	r := &Running{Engine: eng, stop: stop, done: make(chan struct{})}
	go func() { defer close(r.done); eng.Run(ctx) }()
	return r, nil
}

// Stop stops the engine and waits until it has stopped.
func (r *Running) Stop() {
	r.stop()
	<-r.done
}

// Engine starts an engine of cfg for the test, stopped when it ends.
func Engine(t testing.TB, cfg engine.Config) *engine.Engine {
	t.Helper()
	r, err := StartEngine(cfg)
	require.NoError(t, err)
	t.Cleanup(r.Stop)
	return r.Engine
}

// Listen serves h on a loopback port with protocols (weftd's:
// server.Protocols) until the server is closed.
func Listen(h http.Handler, protocols *http.Protocols) *httptest.Server {
	srv := httptest.NewUnstartedServer(h)
	srv.Config.Protocols = protocols
	srv.Start()
	return srv
}

// Serve is Listen until the test ends, answering the server's URL.
func Serve(t testing.TB, h http.Handler, protocols *http.Protocols) string {
	t.Helper()
	srv := Listen(h, protocols)
	t.Cleanup(srv.Close)
	return srv.URL
}
