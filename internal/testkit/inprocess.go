package testkit

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/batch"
	"github.com/weft-dev/weft/client"
	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/internal/testkit/loop"
	"github.com/weft-dev/weft/schedule"
	"github.com/weft-dev/weft/server"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
	"github.com/weft-dev/weft/view"
)

// Options shape an in-process weftd.
type Options struct {
	// Store is the store it runs on; nil, a fresh memstore, closed with
	// the server.
	Store store.Store
	// Engine adjusts the engine's config (its store set, and a poll
	// interval of 10 ms).
	Engine func(*engine.Config)
	// Server adjusts the server's config (the engine's services and the
	// schedules' set); the server given is the one being started, its
	// store and engine ready.
	Server func(*Server, server.Config) server.Config
	// Wrap wraps the handler (a test that sees or alters each request).
	Wrap func(http.Handler) http.Handler
}

// Server is a weftd in process.
type Server struct {
	URL       string
	Store     store.Store
	Engine    *engine.Engine
	Schedules *schedule.Scheduler
	// Batches drives the batch operations, in the background until Close.
	Batches     *batch.Batches
	stopBatches func()
	// Client is a client of the server.
	Client *client.Client

	http      *httptest.Server
	running   *loop.Running
	ownsStore bool
}

// Start starts a weftd in process for the test, stopped when it ends.
func Start(t testing.TB, opts Options) *Server {
	t.Helper()
	s, err := New(opts)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

// New starts a weftd in process; Close stops it. Start is the form for a
// test; New is for what has no test (an Example).
func New(opts Options) (*Server, error) {
	s := &Server{Store: opts.Store}
	if s.Store == nil {
		s.Store, s.ownsStore = memstore.New(memstore.Config{}), true
	}
	cfg := engine.Config{Store: s.Store, PollInterval: 10 * time.Millisecond}
	if opts.Engine != nil {
		opts.Engine(&cfg)
	}
	var err error
	if s.running, err = loop.StartEngine(cfg); err != nil {
		s.closeStore()
		return nil, err
	}
	s.Engine = s.running.Engine
	if s.Schedules, err = schedule.New(schedule.Config{Store: s.Store, Runs: s.Engine}); err != nil {
		s.Close()
		return nil, err
	}
	if s.Batches, err = batch.New(batch.Config{Store: s.Store, Runs: s.Engine, Select: s.Engine.Queries().SelectRuns, Interval: 20 * time.Millisecond}); err != nil {
		s.Close()
		return nil, err
	}
	s.stopBatches = s.runBatches()
	scfg := server.Config{}.WithEngine(s.Engine).WithSchedules(s.Schedules).WithBatches(s.Batches).WithViews(view.New(s.Store))
	if opts.Server != nil {
		scfg = opts.Server(s, scfg)
	}
	h, err := server.New(scfg)
	if err != nil {
		s.Close()
		return nil, err
	}
	var handler http.Handler = h
	if opts.Wrap != nil {
		handler = opts.Wrap(h)
	}
	s.http = loop.Listen(handler, server.Protocols())
	s.URL = s.http.URL
	s.Client = client.New(s.URL)
	return s, nil
}

// Close stops the server, then the engine, then closes a store of its own.
func (s *Server) Close() {
	if s.http != nil {
		s.http.Close()
	}
	if s.stopBatches != nil {
		s.stopBatches()
	}
	s.running.Stop()
	s.closeStore()
}

// runBatches drives the batches until the answered stop is called.
func (s *Server) runBatches() (stop func()) {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { defer close(done); s.Batches.Run(ctx) }()
	return func() { cancel(); <-done }
}

func (s *Server) closeStore() {
	if s.ownsStore {
		_ = s.Store.Close()
	}
}

// Serve serves h on a loopback port over HTTP/1.1 and h2c, as weftd
// does, until the test ends, and answers its URL.
func Serve(t testing.TB, h http.Handler) string {
	t.Helper()
	return loop.Serve(t, h, server.Protocols())
}
