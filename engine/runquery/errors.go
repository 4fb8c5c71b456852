package runquery

import "fmt"

// Error is a query that does not parse or does not type-check: the
// problem and where (Column, 1-based, in characters; the column just past
// the end for "expected … at the end"). Its message quotes field names,
// operators and keywords of the query, never its string values.
type Error struct {
	Column  int
	Message string
	// Found names what the parser found instead ("the end", "a string",
	// "')'"), when it expected something else.
	Found string
}

// Error implements error: "expected a value after '=' at column 14, found
// the end".
func (e *Error) Error() string {
	if e.Found != "" {
		return fmt.Sprintf("%s at column %d, found %s", e.Message, e.Column, e.Found)
	}
	return fmt.Sprintf("%s at column %d", e.Message, e.Column)
}

// expected builds an error for token t where something else was expected.
func expected(t token, format string, args ...any) *Error {
	return &Error{Column: t.col, Message: fmt.Sprintf(format, args...), Found: t.describe()}
}

func errorAt(col int, format string, args ...any) *Error {
	return &Error{Column: col, Message: fmt.Sprintf(format, args...)}
}
