// Package expr is the expression language of Weft's definitions: CEL
// (cel.dev/cel-go) in one environment, compiled and type-checked when a
// definition is validated, evaluated deterministically over JSON values.
//
// # Variables
//
// Every expression may read input (the run's input, dyn) and run.id (a
// string). It may read steps.<id>.output (dyn) for the ids its [Scope]
// lists — the steps upstream of where it is evaluated, and for
// repeat.until the step itself — written steps.<id>.output,
// steps["<id>"].output or has(steps.<id>). Reading a step the definition
// does not have, one that is not upstream, steps by a computed id, steps
// alone or a field other than output is a compile error naming the id.
// Inside a forEach (Scope.FanOut) item (the element, dyn) and index (its
// position, int) exist too; elsewhere they are a compile error. A
// comprehension's variables shadow all of these.
//
// # What each key needs
//
// A key that takes only an expression is compiled with [Env.CompileKey],
// which reads bare CEL or CEL written as "${{ <CEL> }}" alike. [Env.Compile] takes the [Kind] of value its key needs and refuses an
// expression whose checked type cannot be one; a dyn result is checked when
// it is evaluated (rule expression_result_type either way):
//
//	when, repeat.until                           Bool
//	forEach                                      List
//	concurrency.key, throttle.key, fairness.key  String
//	fairness.weight                              Number (int, uint or double; finite)
//	sleepUntil                                   Timestamp
//	${{ }} in an input, searchAttributes values  JSON (anything with a JSON form)
//
// # Values
//
// Values cross between JSON and CEL exactly ([FromJSON], [ToJSON]): null,
// booleans and strings are themselves; a JSON number written without a
// fraction or an exponent is an int when it fits in 64 bits (a uint above
// the int range), any other number a double, so 2 and 2.0 stay apart and
// 9007199254740993 stays exact. A double is written back with a fraction
// or an exponent (2.0, 1e-07) so that it reads back as a double; NaN and
// infinities have no JSON form. Arrays are lists; objects are maps with
// string keys. Timestamps are written as RFC 3339 strings in UTC with
// their nanoseconds, durations as protobuf's JSON strings ("1.5s"). Bytes,
// types, optional values and maps with non-string keys have no JSON form
// and fail the evaluation. A JSON object with a duplicate key, a number
// beyond a double's range and nesting deeper than Limits.Depth are
// refused. [Vars] hold the variables as JSON text, converted only when a
// program reads them; [Vars.Shared] converts them once for many programs
// (a template's expressions, a fan-out's items).
//
// # Determinism
//
// An evaluation reads only its variables: there is no now(), no random
// source, and the time zone is UTC. cel-go iterates maps in Go's random
// order; here every map a comprehension ranges over (input.m.map(k, k),
// a map literal's all(k, …)) is iterated in key order, and JSON output
// writes keys sorted, so the same expression over the same values answers
// the same JSON, byte for byte, on every process.
//
// # Bounds
//
// [Limits]: an expression's length (code points) and nesting are bounded
// when it is parsed, comprehensions' nesting when it is checked; an
// evaluation's cost (CEL's cost units, about one per operation and per
// element touched) is bounded when it runs, as are its result's JSON size
// and depth, and lists.range's length.
//
// # Templates
//
// A JSON string that is exactly "${{ <CEL> }}" — it begins with "${{" and
// ends with "}}", any whitespace inside — is an expression; every other
// string is literal, one that merely contains "${{" included (a string with
// two expressions reads as one expression and fails to compile, with a
// hint). To write a literal string of that shape, prefix one "$":
// "$${{ x }}" is the text "${{ x }}", "$$${{ x }}" the text "$${{ x }}"
// ([Escape], [Literal]). Object keys are always literal. [Env.CompileTemplate]
// walks a JSON value and compiles every expression in it at its own path
// (steps[2].input.lines[0].sku, steps[2].input["a b"]); [Template.Eval]
// writes the value with each expression replaced and the literal parts as
// written (compacted, member order kept).
//
// # Errors
//
// Every error is an [*Error] (a compile answers [Errors], all problems at
// once): the YAML path of the expression, a stable rule id, the line and
// 1-based column within the string that holds it (a template's column
// counts its "${{"), and the message. An evaluation's message never quotes
// a value it read: quoted text is removed, and a missing key is named only
// when the expression spells it (steps.charge, input.customer, a string
// literal), not when it was computed from the data.
//
// Layering: it is pure code over values; it imports the standard library
// and cel-go only, never the store, the engine, a transport or generated
// code. The definition's validation compiles with it; the engine's
// decisions evaluate the programs over the values it prepared.
package expr
