// Package runcodec is the stored form of a run's events, checkpoint and task
// records: a compact binary encoding, each record a format byte and then
// protobuf wire fields (docs/persisted-format.md numbers them), read back
// into the same engine/runstate values. It decodes the JSON those records were stored as
// before, so a store written by an older weftd still loads. A field a
// reader does not know is skipped, so fields can be added; a number is
// never reused. It also writes a stored event's JSON, the form the event
// bus carries, straight from the stored form (AppendStoredEventJSON), without
// reflection: byte for byte what encoding/json writes of the decoded event.
//
// Layering: it may import the standard library, engine/definition,
// engine/runstate, protobuf's wire encoding (protowire) and the Snappy
// block codec of github.com/klauspost/compress/s2 (compressed records),
// never the engine, the store, a transport or generated code.
package runcodec

// The binary field tables of runstate's stored types (fields_gen.go: each
// message's append and decode functions, and the JSON field tables of the
// messages an event holds) are generated from the types' wire and json
// tags by tools/codecgen; the task, timer, outbox and ready records, whose
// fields refer to one another, are written here by hand.
//
//go:generate go run ../../tools/codecgen fields_gen.go
