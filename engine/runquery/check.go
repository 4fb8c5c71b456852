package runquery

import (
	"math"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Query is a parsed and type-checked query, ready to evaluate and plan. It
// is immutable and safe for concurrent use.
type Query struct {
	expr Expr
	root cond
}

// cond is a checked expression.
type cond interface {
	match(r Fields) bool
}

type (
	andCond []cond
	orCond  []cond
	notCond struct{ x cond }
	// cmpCond is a checked comparison: its values typed for the field
	// (numbers keep their own type, compared exactly); null is "= NULL" or
	// "!= NULL".
	cmpCond struct {
		field Field
		op    Op
		vals  []Value
		null  bool
	}
)

// Compile parses and checks src against schema.
func Compile(src string, schema *Schema) (*Query, error) {
	e, err := Parse(src)
	if err != nil {
		return nil, err
	}
	return Check(e, schema)
}

// Check type-checks a parsed query against schema: every field known,
// every operator one its type supports, every literal of the field's type
// (a time field's string an RFC 3339 time, a status one of the statuses).
// Its error is an [*Error] at the offending column.
func Check(e Expr, schema *Schema) (*Query, error) {
	root, err := check(e, schema)
	if err != nil {
		return nil, err
	}
	return &Query{expr: e, root: root}, nil
}

// Expr answers the parsed query.
func (q *Query) Expr() Expr { return q.expr }

// String writes the query in its canonical form.
func (q *Query) String() string { return q.expr.String() }

// checkAll checks the terms of a conjunction or disjunction, stopping at
// the first error.
func checkAll(terms []Expr, s *Schema) ([]cond, *Error) {
	out := make([]cond, len(terms))
	for i, t := range terms {
		c, err := check(t, s)
		if err != nil {
			return nil, err
		}
		out[i] = c
	}
	return out, nil
}

// check checks one expression.
func check(e Expr, s *Schema) (cond, *Error) {
	switch x := e.(type) {
	case *And:
		out, err := checkAll(x.Terms, s)
		return andCond(out), err
	case *Or:
		out, err := checkAll(x.Terms, s)
		return orCond(out), err
	case *Not:
		c, err := check(x.X, s)
		if err != nil {
			return nil, err
		}
		return notCond{c}, nil
	case *Compare:
		return checkCompare(x, s)
	}
	return nil, errorAt(1, "not a query")
}

// ops are the operators each type supports.
var ops = map[Type][]Op{
	Keyword: {Eq, Ne, Lt, Le, Gt, Ge, In, NotIn, StartsWith},
	Int:     {Eq, Ne, Lt, Le, Gt, Ge, In, NotIn},
	Double:  {Eq, Ne, Lt, Le, Gt, Ge, In, NotIn},
	Time:    {Eq, Ne, Lt, Le, Gt, Ge, In, NotIn},
	Bool:    {Eq, Ne},
}

// enumOps are the operators of a keyword with fixed values (status).
var enumOps = []Op{Eq, Ne, In, NotIn}

// checkCompare checks one comparison.
func checkCompare(c *Compare, s *Schema) (cond, *Error) {
	f, ok := s.Field(c.Field)
	if !ok {
		return nil, errorAt(c.FieldCol, "unknown field '%s' (a built-in field or a declared search attribute)", c.Field)
	}
	allowed := ops[f.Type]
	if f.Values != nil {
		allowed = enumOps
	}
	if !slices.Contains(allowed, c.Op) {
		return nil, errorAt(c.OpCol, "%s (%s) does not support %s; it supports %s", f.Name, describeField(f), c.Op, opList(allowed))
	}
	if len(c.Values) == 1 && c.Values[0].Kind == LitNull {
		if c.Op != Eq && c.Op != Ne {
			return nil, errorAt(c.Values[0].Col, "NULL is compared only with = and !=")
		}
		return cmpCond{field: f, op: c.Op, null: true}, nil
	}
	out := cmpCond{field: f, op: c.Op}
	for _, l := range c.Values {
		v, err := literalValue(f, l)
		if err != nil {
			return nil, err
		}
		if c.Op == StartsWith && v.S == "" {
			return nil, errorAt(l.Col, "STARTS_WITH needs a prefix that is not empty")
		}
		out.vals = append(out.vals, v)
	}
	return out, nil
}

// describeField names a field's type for a message.
func describeField(f Field) string {
	if f.Values != nil {
		return "one of its values"
	}
	return article(f.Type)
}

// article names a type with its article: "a keyword", "an int".
func article(t Type) string {
	if t == Int {
		return "an int"
	}
	return "a " + t.String()
}

// opList writes operators for a message.
func opList(list []Op) string {
	parts := make([]string, len(list))
	for i, o := range list {
		parts[i] = string(o)
	}
	return strings.Join(parts, ", ")
}

// literalValue types a literal for field f.
func literalValue(f Field, l Literal) (Value, *Error) {
	mismatch := errorAt(l.Col, "%s is %s: compare it with %s", f.Name, article(f.Type), needs(f.Type))
	switch f.Type {
	case Keyword:
		if l.Kind != LitString {
			return Value{}, mismatch
		}
		if f.Values != nil && !slices.Contains(f.Values, l.Text) {
			return Value{}, errorAt(l.Col, "%s is one of %s", f.Name, strings.Join(f.Values, ", "))
		}
		return KeywordValue(l.Text), nil
	case Int, Double:
		if l.Kind != LitNumber {
			return Value{}, mismatch
		}
		return numberValue(l)
	case Bool:
		if l.Kind != LitBool {
			return Value{}, mismatch
		}
		return BoolValue(l.Bool), nil
	case Time:
		if l.Kind != LitString {
			return Value{}, mismatch
		}
		t, err := time.Parse(time.RFC3339Nano, l.Text)
		if err != nil {
			return Value{}, mismatch
		}
		return TimeValue(t), nil
	}
	return Value{}, mismatch
}

// numberValue reads a number literal: an int when it is written as one and
// fits, a double otherwise.
func numberValue(l Literal) (Value, *Error) {
	if !strings.ContainsAny(l.Text, ".eE") {
		if i, err := strconv.ParseInt(l.Text, 10, 64); err == nil {
			return IntValue(i), nil
		}
	}
	f, err := strconv.ParseFloat(l.Text, 64)
	if err != nil || math.IsInf(f, 0) {
		return Value{}, errorAt(l.Col, "the number is out of range")
	}
	return DoubleValue(f), nil
}

// Match reports whether a run with fields r matches the query.
func (q *Query) Match(r Fields) bool { return q.root.match(r) }

func (c andCond) match(r Fields) bool {
	for _, x := range c {
		if !x.match(r) {
			return false
		}
	}
	return true
}

func (c orCond) match(r Fields) bool {
	for _, x := range c {
		if x.match(r) {
			return true
		}
	}
	return false
}

func (c notCond) match(r Fields) bool { return !c.x.match(r) }

// match decides one comparison. A field without a value matches only
// "!= …", "NOT IN" and "= NULL": no value equals, orders or starts with
// anything.
func (c cmpCond) match(r Fields) bool {
	v, ok := r.Field(c.field.Name)
	if c.null {
		return ok == (c.op == Ne)
	}
	if !ok {
		return c.op == Ne || c.op == NotIn
	}
	switch c.op {
	case Eq, In:
		return c.any(v)
	case Ne, NotIn:
		return !c.any(v)
	case StartsWith:
		return v.Type == Keyword && strings.HasPrefix(v.S, c.vals[0].S)
	}
	o, ok := compare(v, c.vals[0])
	if !ok {
		return false
	}
	switch c.op {
	case Lt:
		return o < 0
	case Le:
		return o <= 0
	case Gt:
		return o > 0
	}
	return o >= 0
}

// any reports whether v equals one of the comparison's values.
func (c cmpCond) any(v Value) bool {
	for _, x := range c.vals {
		if o, ok := compare(v, x); ok && o == 0 {
			return true
		}
	}
	return false
}
