// Package eventpb converts a run's state and events (engine/runstate) to
// the API's Protobuf messages (weft.v1.Event and the messages it holds), and
// checks an event against the proto's protovalidate rules before the engine
// appends it: Check applies those rules compiled once from the descriptors
// (internal/protorules) and read on the runstate.Event each proto field is
// converted from, and leaves an event they do not pass to Validate,
// protovalidate itself, on its conversion. The
// engine validates with it and the server serves with it, so an event is
// converted one way only: what is validated is exactly what a client reads.
//
// Layering: it may import the standard library, engine/definition, engine/runstate,
// internal/protorules, internal/jsonvalue, the generated code under gen/ and
// protovalidate, never
// the engine, the store or a transport.
package eventpb
