// Package definition is the workflow definition as Weft runs it: the model
// (Definition, Action, RetryPolicy, CompensationHook…), the YAML/JSON loader
// (LoadYAML), the defaults (WithDefaults), validation with its DAG checks
// (Validate) and the retry policy's arithmetic (Retryable, ShouldRetry,
// Backoff). docs/semantics.md states the rules it enforces.
//
// Layering: it is pure code; it may import the standard library, the YAML parser
// and engine/expr (the expressions it compiles when it validates), never the
// store, the engine, a transport or generated code. Everything
// else in Weft that needs a definition imports it from here.
package definition
