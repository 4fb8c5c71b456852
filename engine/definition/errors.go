package definition

import (
	"fmt"
	"strings"
)

// Violation names one broken rule of one field, by its path in the request
// or the YAML document (e.g. "actions[2].depends_on[0]") and a stable rule
// id. Its message never quotes an input payload.
type Violation struct {
	Field   string
	Rule    string
	Message string
}

// Error is an invalid definition: every violation found, in a stable order.
// Validate and LoadYAML answer it; the engine answers it to its callers as
// an invalid-argument error with the same violations.
type Error struct {
	Message    string
	Violations []Violation
}

// Error implements error: the message, then each violation as
// "field: message", separated by "; ".
func (e *Error) Error() string { return FormatViolations(e.Message, e.Violations) }

// FormatViolations renders a message and its violations the way every
// validation error of Weft reads: "msg: field: message; field: message".
func FormatViolations(msg string, violations []Violation) string {
	var b strings.Builder
	b.WriteString(msg)
	for i, v := range violations {
		if i == 0 && msg != "" {
			b.WriteString(": ")
		} else if i > 0 {
			b.WriteString("; ")
		}
		if v.Field == "" {
			b.WriteString(v.Message)
		} else {
			fmt.Fprintf(&b, "%s: %s", v.Field, v.Message)
		}
	}
	return b.String()
}

// violation builds one violation.
func violation(field, rule, format string, args ...any) Violation {
	return Violation{Field: field, Rule: rule, Message: fmt.Sprintf(format, args...)}
}
