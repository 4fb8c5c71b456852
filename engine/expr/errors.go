package expr

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"
)

// The rule ids an [Error] carries, stable for callers and tests.
const (
	// RuleSyntax: the expression does not parse.
	RuleSyntax = "expression_syntax"
	// RuleType: the expression does not type-check (an undeclared name, no
	// matching overload…).
	RuleType = "expression_type"
	// RuleUnknownStep: the expression reads steps.<id> for an id the
	// definition does not have.
	RuleUnknownStep = "expression_unknown_step"
	// RuleNotUpstream: the expression reads a step that exists but is not
	// upstream of where the expression is evaluated.
	RuleNotUpstream = "expression_not_upstream"
	// RuleStepShape: steps is used other than as steps.<id>.output.
	RuleStepShape = "expression_step_reference"
	// RuleFanOutOnly: item or index is read outside a fan-out.
	RuleFanOutOnly = "expression_fan_out_only"
	// RuleResultType: the expression's result cannot be of the type its
	// key needs (checked at compile time when the type is known, at
	// evaluation otherwise).
	RuleResultType = "expression_result_type"
	// RuleEmpty: a ${{ }} with nothing inside, or an empty bare expression.
	RuleEmpty = "expression_empty"
	// RuleEval: the evaluation failed (no such key, division by zero, the
	// cost limit, a value with no JSON form…).
	RuleEval = "expression_eval"
	// RuleJSON: a JSON value (a template, or a variable's value) is not
	// JSON Weft can read: malformed, too deep, a duplicate key, a number out
	// of range.
	RuleJSON = "expression_json"
	// RuleLimit: the result is larger than the limit.
	RuleLimit = "expression_limit"
)

// Error is one problem with one expression: where it is (Path, the YAML
// path of the expression, e.g. "steps[2].when"; Line and Column, 1-based,
// within the string that holds it, 0 when no position applies), which rule
// it breaks and what is wrong. Its message never quotes a value the
// expression read.
type Error struct {
	Path    string
	Rule    string
	Line    int
	Column  int
	Message string
}

// Error implements error: "steps[2].when: column 7: undeclared reference to
// 'inptu'" (with the line too when the expression spans several).
func (e *Error) Error() string {
	switch {
	case e.Line > 1:
		return fmt.Sprintf("%s: line %d, column %d: %s", e.Path, e.Line, e.Column, e.Message)
	case e.Column > 0:
		return fmt.Sprintf("%s: column %d: %s", e.Path, e.Column, e.Message)
	default:
		return fmt.Sprintf("%s: %s", e.Path, e.Message)
	}
}

// Errors are every problem found, in source order; a compile answers them
// as its error.
type Errors []*Error

// Error implements error: each error, separated by "; ".
func (es Errors) Error() string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.Error()
	}
	return strings.Join(parts, "; ")
}

// errorf builds one Error without a position.
func errorf(path, rule, format string, args ...any) *Error {
	return &Error{Path: path, Rule: rule, Message: fmt.Sprintf(format, args...)}
}

// quoted finds quoted text in a message of the evaluator, which may be a
// value read from the input (strconv's `parsing "abc"`, a timestamp's parse
// error).
var quoted = regexp.MustCompile(`"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'`)

// maxMessage bounds the length of a message taken from the evaluator.
const maxMessage = 200

// redact answers an evaluator's message without the values it may quote: a
// quoted run becomes "…", and "no such key: <key>" loses its key unless the
// expression itself spells it (names, a field name or a string literal of
// the expression's source, are not data).
func redact(msg string, spelled map[string]bool) string {
	if i := strings.Index(msg, "no such key"); i >= 0 {
		key := strings.TrimSpace(strings.TrimPrefix(msg[i:], "no such key:"))
		if spelled[key] {
			return msg[:i] + "no such key: " + key
		}
		return msg[:i] + "no such key"
	}
	msg = quoted.ReplaceAllString(msg, `"…"`)
	if len(msg) > maxMessage {
		n := maxMessage
		for n > 0 && !utf8.RuneStart(msg[n]) {
			n--
		}
		msg = msg[:n] + "…"
	}
	return msg
}
