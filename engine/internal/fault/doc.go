// Package fault is the engine's error vocabulary: its codes, its one coded
// error (Error, which carries identifiers and the state a caller needs to
// recover, never a payload) and the one constructor of each code's error,
// including the answer to a refusal of the decision rules (Refused) and the
// mark of the engine's own broken rule (Broken). The engine re-exports the
// codes, Error and CodeOf; the server maps each code onto the API's.
//
// Layering: it may import the standard library, engine/definition,
// engine/runstate, engine/eventpb and engine/internal/decide only
// (tools/weftlint enforces it).
package fault
