package expr

import (
	"strings"

	"cel.dev/cel-go/cel"
	"cel.dev/cel-go/common"
	"cel.dev/cel-go/common/ast"
	celtypes "cel.dev/cel-go/common/types"
)

// Kind is the type of value a key needs from its expression.
type Kind int

// The kinds, per key: docs of the package list which key needs which.
const (
	// JSON is any value with a JSON form: a ${{ }} in a step's input, a
	// searchAttributes value.
	JSON Kind = iota
	// Bool: when, repeat.until.
	Bool
	// List: forEach.
	List
	// String: concurrency.key, throttle.key, fairness.key.
	String
	// Number (an int, a uint or a double): fairness.weight.
	Number
	// Timestamp: sleepUntil.
	Timestamp
)

// String names the kind as messages do.
func (k Kind) String() string {
	switch k {
	case Bool:
		return "a bool"
	case List:
		return "a list"
	case String:
		return "a string"
	case Number:
		return "a number"
	case Timestamp:
		return "a timestamp"
	}
	return "a JSON value"
}

// accepts reports whether a checked result type t can be of kind k: dyn
// can be anything, and is checked when it is evaluated.
func (k Kind) accepts(t *cel.Type) bool {
	if t.Kind() == celtypes.DynKind || t.Kind() == celtypes.AnyKind || t.Kind() == celtypes.ErrorKind {
		return true
	}
	switch k {
	case Bool:
		return t.Kind() == celtypes.BoolKind
	case List:
		return t.Kind() == celtypes.ListKind
	case String:
		return t.Kind() == celtypes.StringKind
	case Number:
		return t.Kind() == celtypes.IntKind || t.Kind() == celtypes.UintKind || t.Kind() == celtypes.DoubleKind
	case Timestamp:
		return t.Kind() == celtypes.TimestampKind
	}
	switch t.Kind() {
	case celtypes.BytesKind, celtypes.TypeKind, celtypes.OpaqueKind:
		return false
	}
	return true
}

// Scope is what an expression may read besides input and run.id.
type Scope struct {
	// Steps are the ids the expression may read as steps.<id>.output: the
	// steps upstream of where it is evaluated (for repeat.until, also the
	// step itself, whose previous iteration it reads).
	Steps []string
	// Known are every step id of the definition, so that a step that
	// exists but is not readable here is named as such rather than as
	// unknown.
	Known []string
	// FanOut declares item (the element, dyn) and index (its position,
	// int): the expression is evaluated inside a forEach.
	FanOut bool
}

// Program is a compiled, type-checked expression, ready to evaluate. It is
// safe for concurrent use.
type Program struct {
	path   string
	kind   Kind
	prg    cel.Program
	steps  []string // the step ids it reads
	fanOut bool
	limits Limits
	// spelled are the field names and string literals of the source,
	// which an error may name.
	spelled map[string]bool
}

// Path answers the path the program was compiled for.
func (p *Program) Path() string { return p.path }

// Steps answers the ids of the steps whose output the program reads.
func (p *Program) Steps() []string { return p.steps }

// Compile parses and type-checks src, an expression at path (the YAML path
// that names it in errors, e.g. "steps[2].when") whose value must be of
// kind k, in scope s. Its error is [Errors]: every problem found, each
// naming path and its position in src.
func (e *Env) Compile(src, path string, k Kind, s Scope) (*Program, error) {
	return e.compile(src, path, k, s, 0)
}

// compile is Compile with columns shifted by offset (the code points
// before src in the string that holds it: a template's "${{").
func (e *Env) compile(src, path string, k Kind, s Scope, offset int) (*Program, error) {
	if strings.TrimSpace(src) == "" {
		return nil, Errors{errorf(path, RuleEmpty, "the expression is empty")}
	}
	env := e.plain
	if s.FanOut {
		env = e.fanOut
	}
	parsed, iss := env.Parse(src)
	if iss.Err() != nil {
		return nil, celErrors(path, RuleSyntax, iss.Errors(), offset)
	}
	refs := &refChecker{path: path, scope: s, info: parsed.NativeRep().SourceInfo(), offset: offset}
	refs.check(parsed.NativeRep().Expr(), nil)
	checked, iss := env.Check(parsed)
	errs := refs.errs
	if iss.Err() != nil && len(errs) == 0 {
		errs = append(errs, celErrors(path, RuleType, iss.Errors(), offset)...)
	}
	if len(errs) > 0 {
		return nil, errs
	}
	if !k.accepts(checked.OutputType()) {
		return nil, Errors{errorf(path, RuleResultType, "the expression must be %s, and is %s", k, checked.OutputType())}
	}
	prg, err := env.Program(checked,
		cel.CostLimit(e.limits.Cost),
		cel.CustomDecoratorV2(orderRanges(rangeIDs(checked.NativeRep().Expr()))),
	)
	if err != nil {
		return nil, Errors{errorf(path, RuleType, "%s", redact(err.Error(), nil))}
	}
	return &Program{path: path, kind: k, prg: prg, steps: refs.read, fanOut: s.FanOut, limits: e.limits,
		spelled: spelledNames(checked.NativeRep().Expr())}, nil
}

// celErrors converts CEL's issues to Errors at path.
func celErrors(path, rule string, issues []*common.Error, offset int) Errors {
	out := make(Errors, 0, len(issues))
	for _, is := range issues {
		e := &Error{Path: path, Rule: rule, Message: cleanMessage(is.Message)}
		if loc := is.Location; loc != nil && loc.Line() > 0 {
			e.Line, e.Column = loc.Line(), loc.Column()+1
			if e.Line == 1 {
				e.Column += offset
			}
		}
		out = append(out, e)
	}
	return out
}

// cleanMessage drops what CEL's messages say about containers, which Weft
// does not use.
func cleanMessage(m string) string {
	return strings.ReplaceAll(m, " (in container '')", "")
}

// refChecker checks every use of steps, item and index in an expression:
// steps only as steps.<id>.output (or has(steps.<id>)) for an id in scope,
// item and index only in a fan-out. A comprehension's variables shadow
// them.
type refChecker struct {
	path   string
	scope  Scope
	info   *ast.SourceInfo
	offset int
	errs   Errors
	read   []string
}

// check visits e with the names bound by enclosing comprehensions.
func (c *refChecker) check(e ast.Expr, bound []string) {
	if e == nil {
		return
	}
	switch e.Kind() {
	case ast.IdentKind:
		c.ident(e, bound)
		return
	case ast.SelectKind, ast.CallKind:
		if c.stepReference(e, bound) {
			return
		}
	case ast.ComprehensionKind:
		cx := e.AsComprehension()
		c.check(cx.IterRange(), bound)
		c.check(cx.AccuInit(), bound)
		inner := append(bound[:len(bound):len(bound)], cx.IterVar(), cx.IterVar2(), cx.AccuVar())
		c.check(cx.LoopCondition(), inner)
		c.check(cx.LoopStep(), inner)
		c.check(cx.Result(), append(bound[:len(bound):len(bound)], cx.AccuVar()))
		return
	}
	for _, ch := range children(e) {
		c.check(ch, bound)
	}
}

// ident checks a bare name.
func (c *refChecker) ident(e ast.Expr, bound []string) {
	name := e.AsIdent()
	if isBound(name, bound) {
		return
	}
	switch name {
	case varSteps:
		c.add(e, 0, RuleStepShape, "read a step's output as steps.<id>.output")
	case varItem, varIndex:
		if !c.scope.FanOut {
			c.add(e, 0, RuleFanOutOnly, "%s exists only in a forEach (the element and its position)", name)
		}
	}
}

// stepReference checks e when it is steps.<id>… and answers whether it
// was (its parts are then checked).
func (c *refChecker) stepReference(e ast.Expr, bound []string) bool {
	operand, field, ok := member(e)
	if !ok {
		return false
	}
	if isSteps(operand, bound) { // steps.<id> not followed by .output
		c.stepID(e, field)
		if e.Kind() != ast.SelectKind || !e.AsSelect().IsTestOnly() {
			c.add(e, 0, RuleStepShape, "read a step's output as steps.<id>.output")
		}
		return true
	}
	inner, id, ok := member(operand)
	if !ok || !isSteps(inner, bound) {
		return false
	}
	c.stepID(operand, id)
	if field != output {
		c.add(e, 0, RuleStepShape, "a step has only .output, not .%s", fieldName(field))
	}
	return true
}

// stepID checks the id in steps.<id> (id is "" when it is computed).
func (c *refChecker) stepID(at ast.Expr, id string) {
	shift := 0
	if at.Kind() == ast.SelectKind {
		shift = 1 // the select's position is its dot; name the id after it
	}
	switch {
	case id == "":
		c.add(at, 0, RuleStepShape, "name a step by its id (steps.<id>.output); it cannot be computed")
	case contains(c.scope.Steps, id):
		if !contains(c.read, id) {
			c.read = append(c.read, id)
		}
	case contains(c.scope.Known, id):
		c.add(at, shift, RuleNotUpstream, "step %q is not upstream of this expression: only the steps it depends on (directly or through others) can be read", id)
	default:
		c.add(at, shift, RuleUnknownStep, "no step has the id %q", id)
	}
}

// fieldName spells a field for a message.
func fieldName(f string) string {
	if f == "" {
		return "<computed>"
	}
	return f
}

// member answers the operand and the field name of x.f, x["f"] and
// has(x.f); a computed index answers field "".
func member(e ast.Expr) (ast.Expr, string, bool) {
	switch e.Kind() {
	case ast.SelectKind:
		s := e.AsSelect()
		return s.Operand(), s.FieldName(), true
	case ast.CallKind:
		call := e.AsCall()
		if call.FunctionName() != "_[_]" && call.FunctionName() != "_[?_]" || len(call.Args()) != 2 {
			return nil, "", false
		}
		idx := call.Args()[1]
		if idx.Kind() == ast.LiteralKind {
			if s, ok := idx.AsLiteral().(celtypes.String); ok {
				return call.Args()[0], string(s), true
			}
		}
		return call.Args()[0], "", true
	}
	return nil, "", false
}

// isSteps reports whether e is the variable steps (not shadowed).
func isSteps(e ast.Expr, bound []string) bool {
	return e.Kind() == ast.IdentKind && e.AsIdent() == varSteps && !isBound(varSteps, bound)
}

// isBound reports whether a comprehension binds name.
func isBound(name string, bound []string) bool {
	return contains(bound, name)
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// add records an error at e's position.
func (c *refChecker) add(e ast.Expr, shift int, rule, format string, args ...any) {
	err := errorf(c.path, rule, format, args...)
	if loc := c.info.GetStartLocation(e.ID()); loc.Line() > 0 {
		err.Line, err.Column = loc.Line(), loc.Column()+1+shift
		if err.Line == 1 {
			err.Column += c.offset
		}
	}
	c.errs = append(c.errs, err)
}

// spelledNames answers the field names and string literals in e.
func spelledNames(e ast.Expr) map[string]bool {
	out := map[string]bool{}
	visit(e, func(x ast.Expr) {
		switch x.Kind() {
		case ast.SelectKind:
			out[x.AsSelect().FieldName()] = true
		case ast.LiteralKind:
			if s, ok := x.AsLiteral().(celtypes.String); ok {
				out[string(s)] = true
			}
		}
	})
	return out
}

// CompileKey compiles the value of a key that takes an expression (when,
// forEach, a key, sleepUntil): bare CEL, or CEL written as a template
// "${{ <CEL> }}", whose columns then count the "${{".
func (e *Env) CompileKey(s, path string, k Kind, sc Scope) (*Program, error) {
	if src, offset, ok := Expression(s); ok {
		return e.compile(src, path, k, sc, offset)
	}
	return e.compile(s, path, k, sc, 0)
}
