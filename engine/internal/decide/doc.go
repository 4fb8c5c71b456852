// Package decide holds the decision rules: given a run's state, its
// definition and what happened (a worker's report, a signal, an operator's
// request, a due timer), what the run does next — advance, dispatch,
// settle, retry, fail, compensate, cancel, skip, wait.
//
// A Decision changes the run's state in place and records everything else
// it does through a Recorder: the events it appends, the status moves (the
// recorder keeps the indexes that follow them), the tasks and timers it
// sets, the reconciliation records it reads and writes. The engine's
// recorder implements it and commits what was recorded as one conditional
// batch (docs/architecture.md, "The life of a decision"); a decision that
// answers an error commits nothing.
//
// Layering: it may import the standard library, engine/definition and
// engine/runstate only — never the store, dispatch, the engine or the
// transport (tools/weftlint enforces it).
package decide
