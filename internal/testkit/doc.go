// Package testkit starts weftd for tests, the two ways they need it: in
// process (Start: an engine over a store, its schedules and the server's
// handler on a loopback port, over HTTP/1.1 and h2c) and as a real process
// (StartWeftd: the binary Build made from this tree, on a free port, with
// a fresh data directory or the store, Redis and key prefix ClusterFlags
// gives the test), and serves any handler the same way (Serve). Every
// server and process a test starts is stopped when the test ends; a weftd
// process must then exit 0 on SIGTERM.
//
// Its lowest layer, internal/testkit/loop (an engine run until stopped, a
// handler served on loopback), imports no server, so the server package's
// own tests use it too.
//
// Layering: it may import the standard library, client, engine, schedule,
// server, store, store/memstore, store/sqlstore/sqltest,
// internal/redistest, internal/testkit/loop and testify; only tests import it (the engine's
// never: they may not reach the server).
package testkit
