// Package engine is Weft's domain: the scheduler, the run and step state
// machines, retries and timeouts, compensation, signals, manual completion,
// activity result reconciliation, the append-only event log and its
// projections, checkpoint commits and run ownership.
//
// Workflow definitions, their loading, defaults, validation and retry
// arithmetic live in engine/definition, which imports nothing of the engine.
//
// It may import the store contract (package store, never a backend), the
// lease interface and the standard library. It knows nothing of HTTP,
// Connect or Protobuf transports: the server package translates between the
// API and the engine.
package engine
