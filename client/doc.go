// Package client is Weft's Go SDK: a typed client over the generated Connect
// client (faults as typed errors with a stable code) and a worker runtime that
// registers activities, polls for tasks, heartbeats and reports results.
//
// It may import gen/ and connect-go; it never imports the engine, the store or
// the server, so that it speaks to Weft only through the public API. The
// TypeScript client lives in client/ts.
package client
