// Package runquery is the query language of ListRuns and CountRuns: a
// lexer and parser, the type check against a [Schema] of the built-in
// fields and the declared search attributes, an evaluator over a run's
// field values, and a planner that names the index scan a store can read
// instead of every run.
//
// # Grammar
//
//	query      = or
//	or         = and { OR and }
//	and        = not { AND not }
//	not        = NOT not | "(" query ")" | comparison
//	comparison = field ( "=" | "!=" | "<" | "<=" | ">" | ">=" ) value
//	           | field [ NOT ] IN "(" value { "," value } ")"
//	           | field STARTS_WITH string
//	value      = string | number | TRUE | FALSE | NULL
//
// Keywords are read in any case; field names as written. Strings are in
// double or single quotes with the escapes \\ \" \' \n \t \r \uXXXX;
// numbers are -?digits[.digits][e±digits]. A query is at most 8 KiB, 200
// comparisons, 32 levels of parentheses and NOT, and 500 values per IN
// list. An error names the 1-based column (in characters) and the problem:
// "expected a value after '=' at column 14, found the end".
//
// # Fields and types
//
// The built-in fields are status (one of the run statuses: =, !=, IN, NOT
// IN), plan, planVersion, runId, submittedBy, failedStep, parentRunId
// (keywords) and createdAt, startedAt, endedAt (times). Search attributes
// are declared with a type — keyword, int, double, bool, time — and a name
// (a letter, then letters, digits and '_', at most 64; not a built-in
// field or a keyword of the language); a schema declares at most 100.
// Keywords support every operator (ordered by bytes; STARTS_WITH a
// non-empty prefix); ints, doubles and times every operator but
// STARTS_WITH; bools = and !=. A literal must be of its field's type: a
// string for a keyword, a number for an int or a double (compared
// exactly: attempts > 1.5 holds for 2; 9007199254740993 is not
// 9007199254740992.0), TRUE or FALSE for a bool, an RFC 3339 string for a
// time. [AttributeValue] reads an attribute's value from JSON by the same
// types (a keyword at most 256 bytes). CountRuns groups by status, plan,
// failedStep or a keyword, bool or int attribute ([Schema.GroupField]).
//
// # Absent values
//
// A field without a value (endedAt of a running run, an attribute not set)
// equals, orders and starts with nothing: =, <, <=, >, >=, IN and
// STARTS_WITH are false, != and NOT IN true, so that "a != x" is always
// "NOT a = x". "field = NULL" holds when the field has no value, "field !=
// NULL" when it has one.
//
// # Plans
//
// [Query.Plan] looks at the query's top-level conjuncts: = and IN on an
// indexed field are points, <, <=, >, >= and STARTS_WITH are a range, an
// OR of equalities on one field is the union of their points; NOT, !=,
// NOT IN and NULL are not indexable. Conjuncts on one field are merged
// (points intersected, ranges narrowed; contradictions read nothing), and
// numbers are written in the field's type (attempts > 1.5 scans attempts
// >= 2). The scan with the smallest estimate wins — by the store's
// [Estimator] when it has statistics, else by each field's selectivity —
// and the store reads only the runs it names, O(matches) for a selective
// query, then matches each against the whole query. A scan never leaves
// out a run that matches.
//
// Layering: it is pure code over values; it imports the standard library
// and engine/runstate (the run statuses) only, never the store, the engine
// or a transport.
package runquery
