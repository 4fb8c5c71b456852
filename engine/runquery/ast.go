package runquery

import (
	"strconv"
	"strings"
)

// Expr is a parsed query: an [And], an [Or], a [Not] or a [Compare].
type Expr interface {
	// Column is where the expression begins (1-based).
	Column() int
	// String writes the expression back as a query that parses to it.
	String() string
}

// And holds when every term does.
type And struct {
	Terms []Expr
}

// Or holds when any term does.
type Or struct {
	Terms []Expr
}

// Not holds when X does not.
type Not struct {
	X   Expr
	Col int
}

// Op is a comparison's operator.
type Op string

// The operators.
const (
	Eq         Op = "="
	Ne         Op = "!="
	Lt         Op = "<"
	Le         Op = "<="
	Gt         Op = ">"
	Ge         Op = ">="
	In         Op = "IN"
	NotIn      Op = "NOT IN"
	StartsWith Op = "STARTS_WITH"
)

// Compare is one comparison of a field with a literal (a list for IN and
// NOT IN).
type Compare struct {
	Field    string
	FieldCol int
	Op       Op
	OpCol    int
	Values   []Literal
}

// LitKind is a literal's kind as written.
type LitKind int

// The kinds of literal.
const (
	LitString LitKind = iota
	LitNumber
	LitBool
	LitNull
)

// Literal is a value as the query writes it.
type Literal struct {
	Kind LitKind
	Text string // a string's value, a number's text
	Bool bool
	Col  int
}

// Column implements Expr.
func (e *And) Column() int { return e.Terms[0].Column() }

// Column implements Expr.
func (e *Or) Column() int { return e.Terms[0].Column() }

// Column implements Expr.
func (e *Not) Column() int { return e.Col }

// Column implements Expr.
func (e *Compare) Column() int { return e.FieldCol }

// String implements Expr.
func (e *And) String() string { return join(e.Terms, " AND ") }

// String implements Expr.
func (e *Or) String() string { return join(e.Terms, " OR ") }

// String implements Expr.
func (e *Not) String() string { return "NOT " + paren(e.X) }

// String implements Expr.
func (e *Compare) String() string {
	if e.Op == In || e.Op == NotIn {
		vals := make([]string, len(e.Values))
		for i, v := range e.Values {
			vals[i] = v.String()
		}
		return e.Field + " " + string(e.Op) + " (" + strings.Join(vals, ", ") + ")"
	}
	return e.Field + " " + string(e.Op) + " " + e.Values[0].String()
}

// String writes the literal as the query language reads it.
func (l Literal) String() string {
	switch l.Kind {
	case LitNumber:
		return l.Text
	case LitBool:
		return strings.ToUpper(strconv.FormatBool(l.Bool))
	case LitNull:
		return "NULL"
	}
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range l.Text {
		switch r {
		case '"', '\\':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '\n':
			b.WriteString(`\n`)
		case '\t':
			b.WriteString(`\t`)
		case '\r':
			b.WriteString(`\r`)
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

// join writes terms with sep, each parenthesized when it is itself an And
// or an Or.
func join(terms []Expr, sep string) string {
	parts := make([]string, len(terms))
	for i, t := range terms {
		parts[i] = paren(t)
	}
	return strings.Join(parts, sep)
}

// paren writes e, in parentheses when it is an And or an Or.
func paren(e Expr) string {
	switch e.(type) {
	case *And, *Or:
		return "(" + e.String() + ")"
	}
	return e.String()
}
