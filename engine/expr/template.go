package expr

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"regexp"
	"strconv"
	"strings"
	"unicode/utf8"
)

// The template rule (the package's "Templates" section): a JSON string
// that is exactly "${{ <CEL> }}" — it begins with "${{" and ends with "}}",
// with any whitespace inside — is an expression, replaced by its value.
// Every other string is literal, one that merely contains "${{" included.
// A string that is "$" followed by a string of that form, or by such an
// escape, is literal with one "$" removed: "$${{ x }}" is the text
// "${{ x }}", "$$${{ x }}" is "$${{ x }}". Object keys are always literal.
const (
	open  = "${{"
	close = "}}"
)

// Expression reports whether s is an expression by the template rule and,
// when it is, answers the CEL source inside it and the code points before
// that source ("${{").
func Expression(s string) (src string, offset int, ok bool) {
	if !strings.HasPrefix(s, open) || !strings.HasSuffix(s, close) || len(s) < len(open)+len(close) {
		return "", 0, false
	}
	return s[len(open) : len(s)-len(close)], len(open), true
}

// Literal answers the literal text of a string that is not an expression:
// an escaped expression loses one "$"; every other string is itself.
func Literal(s string) string {
	if dollars(s) >= 2 && isExpression(s[dollars(s)-1:]) {
		return s[1:]
	}
	return s
}

// Escape answers the string a definition writes for the literal text s:
// s itself, or with one more "$" when the template rule would read s as an
// expression or an escape.
func Escape(s string) string {
	if n := dollars(s); n >= 1 && isExpression(s[n-1:]) {
		return "$" + s
	}
	return s
}

// dollars counts the "$" that s begins with.
func dollars(s string) int {
	return len(s) - len(strings.TrimLeft(s, "$"))
}

// isExpression reports whether s is an expression by the template rule.
func isExpression(s string) bool {
	_, _, ok := Expression(s)
	return ok
}

// Template is a JSON value (a step's input, a searchAttributes map) whose
// expression strings are compiled. It is safe for concurrent use.
type Template struct {
	root  *node
	progs []*Program
}

// node is one value of a template: literal JSON text, an expression, an
// array or an object (whose members keep their order).
type node struct {
	literal json.RawMessage // a scalar, compact
	prog    *Program        // an expression
	elems   []*node         // an array
	keys    []string        // an object's keys, in order
	members []*node         // and its values
	object  bool
	array   bool
}

// CompileTemplate reads value (JSON text) at path (e.g. "steps[2].input")
// and compiles every expression string in it, each at its own path
// ("steps[2].input.customer.id", "steps[2].input.lines[3]") to kind JSON
// in scope s. Its error is [Errors]: every problem found.
func (e *Env) CompileTemplate(value json.RawMessage, path string, s Scope) (*Template, error) {
	return e.compileTemplate(value, path, JSON, s)
}

// compileTemplate is CompileTemplate with the kind its expressions need.
func (e *Env) compileTemplate(value json.RawMessage, path string, k Kind, s Scope) (*Template, error) {
	d := json.NewDecoder(bytes.NewReader(value))
	d.UseNumber()
	c := &templateCompiler{env: e, scope: s, kind: k, d: d}
	root, err := c.value(path, 0)
	if err != nil {
		return nil, Errors{errorf(path, RuleJSON, "%s", err.Error())}
	}
	if _, err := d.Token(); err != io.EOF {
		return nil, Errors{errorf(path, RuleJSON, "more than one JSON value")}
	}
	if len(c.errs) > 0 {
		return nil, c.errs
	}
	return &Template{root: root, progs: c.progs}, nil
}

// templateCompiler walks a template's JSON.
type templateCompiler struct {
	env   *Env
	scope Scope
	kind  Kind
	d     *json.Decoder
	errs  Errors
	progs []*Program
}

// value reads one value at path. A malformed document is its error; an
// expression's problems are collected in errs.
func (c *templateCompiler) value(path string, depth int) (*node, error) {
	tok, err := c.d.Token()
	if err != nil {
		return nil, jsonSyntax(err)
	}
	switch t := tok.(type) {
	case string:
		return c.str(path, t), nil
	case json.Delim:
		if depth >= c.env.limits.Depth {
			return nil, errTooDeep
		}
		if t == '[' {
			return c.array(path, depth+1)
		}
		if t == '{' {
			return c.object(path, depth+1)
		}
		return nil, errors.New("malformed JSON")
	}
	b, err := json.Marshal(tok)
	if err != nil {
		return nil, errors.New("malformed JSON")
	}
	return &node{literal: b}, nil
}

// str compiles an expression string or keeps a literal one.
func (c *templateCompiler) str(path, s string) *node {
	src, offset, ok := Expression(s)
	if !ok {
		b, _ := json.Marshal(Literal(s))
		return &node{literal: b}
	}
	prog, err := c.env.compile(src, path, c.kind, c.scope, utf8.RuneCountInString(s[:offset]))
	if err != nil {
		var errs Errors
		errors.As(err, &errs)
		if strings.Contains(src, open) {
			errs = append(errs, errorf(path, RuleSyntax, "a string is one expression when it is exactly ${{ … }}; to join text and values, concatenate them in one expression"))
		}
		c.errs = append(c.errs, errs...)
		return &node{}
	}
	c.progs = append(c.progs, prog)
	return &node{prog: prog}
}

// array reads an array's elements.
func (c *templateCompiler) array(path string, depth int) (*node, error) {
	n := &node{array: true}
	for i := 0; c.d.More(); i++ {
		el, err := c.value(path+"["+strconv.Itoa(i)+"]", depth)
		if err != nil {
			return nil, err
		}
		n.elems = append(n.elems, el)
	}
	if _, err := c.d.Token(); err != nil {
		return nil, jsonSyntax(err)
	}
	return n, nil
}

// object reads an object's members, refusing a duplicate key.
func (c *templateCompiler) object(path string, depth int) (*node, error) {
	n := &node{object: true}
	seen := map[string]bool{}
	for c.d.More() {
		tok, err := c.d.Token()
		if err != nil {
			return nil, jsonSyntax(err)
		}
		key := tok.(string)
		if seen[key] {
			return nil, errors.New("duplicate key in a JSON object at " + memberPath(path, key))
		}
		seen[key] = true
		v, err := c.value(memberPath(path, key), depth)
		if err != nil {
			return nil, err
		}
		n.keys, n.members = append(n.keys, key), append(n.members, v)
	}
	if _, err := c.d.Token(); err != nil {
		return nil, jsonSyntax(err)
	}
	return n, nil
}

// plainKey is a key a path can spell after a dot.
var plainKey = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_-]*$`)

// memberPath is path's member key: path.key, or path["odd key"].
func memberPath(path, key string) string {
	if plainKey.MatchString(key) {
		return path + "." + key
	}
	return path + "[" + strconv.Quote(key) + "]"
}

// Programs answers the template's expressions, in document order.
func (t *Template) Programs() []*Program { return t.progs }

// Static reports whether the template has no expression: its value is its
// text, compacted.
func (t *Template) Static() bool { return len(t.progs) == 0 }

// Eval answers the template's value over v: its literal parts as written
// (compacted, escapes removed), each expression replaced by its value.
func (t *Template) Eval(v Vars) (json.RawMessage, error) {
	var b []byte
	b, err := t.root.append(b, v.Shared())
	if err != nil {
		return nil, err
	}
	return b, nil
}

// append appends n's value over v.
func (n *node) append(b []byte, v Vars) ([]byte, error) {
	switch {
	case n.prog != nil:
		out, err := n.prog.EvalJSON(v)
		if err != nil {
			return nil, err
		}
		return append(b, out...), nil
	case n.array:
		b = append(b, '[')
		for i, el := range n.elems {
			if i > 0 {
				b = append(b, ',')
			}
			var err error
			if b, err = el.append(b, v); err != nil {
				return nil, err
			}
		}
		return append(b, ']'), nil
	case n.object:
		b = append(b, '{')
		for i, k := range n.keys {
			if i > 0 {
				b = append(b, ',')
			}
			key, _ := json.Marshal(k)
			b = append(append(b, key...), ':')
			var err error
			if b, err = n.members[i].append(b, v); err != nil {
				return nil, err
			}
		}
		return append(b, '}'), nil
	}
	return append(b, n.literal...), nil
}
