// Package dispatch is how the engine's committed decisions reach the callers
// that wait on them: long polls and the tasks handed to them (hand-off and
// eager dispatch), wake-ups of polls and event watches in this process and,
// through a Notifier, in the others, the queue hints that let a poll's scan
// skip claimed entries, the claims in flight, the workers that poll this
// process (Pollers), and the bounded caches of what the store holds.
//
// Dispatch never decides: it never reads or writes the store, and it knows
// nothing of runs, steps or tasks beyond the opaque values the engine hands
// it. The engine decides and commits, then hands dispatch the committed
// decision's Effects (Dispatcher.Settle); a poll asks dispatch to wait and to
// answer (Dispatcher.Poll, Dispatcher.Answer).
//
// Layering: it may import only the standard library (tools/weftlint
// enforces it).
package dispatch
