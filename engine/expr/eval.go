package expr

import (
	"encoding/json"
	"errors"
	"math"
	"sync"
	"time"

	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
)

// Vars are the values an evaluation reads, as the engine holds them: JSON
// text. Only what the program reads is converted.
type Vars struct {
	// Input is the run's input (absent: null).
	Input json.RawMessage
	// Steps are the outputs of the steps the expression may read, by id. A
	// step the program reads that is missing here (it has not finished,
	// or was skipped) fails the evaluation with "no such key".
	Steps map[string]json.RawMessage
	// RunID is the run's id.
	RunID string
	// Item and Index are the fan-out's element and its position (read only
	// by a program compiled with Scope.FanOut).
	Item  json.RawMessage
	Index int

	// cache holds the converted input and step outputs (see Shared).
	cache *varCache
}

// Shared answers v with its input and step outputs converted once for
// every program evaluated with it (and with copies of it that change only
// Item and Index): a template's expressions, a fan-out's items. It is safe
// for concurrent use.
func (v Vars) Shared() Vars {
	if v.cache == nil {
		v.cache = &varCache{steps: map[string]ref.Val{}}
	}
	return v
}

// varCache is what Shared keeps.
type varCache struct {
	mu    sync.Mutex
	input ref.Val
	steps map[string]ref.Val
}

// get answers the converted value called name, converting it with conv
// the first time.
func (c *varCache) get(name string, conv func() (ref.Val, error)) (ref.Val, error) {
	if c == nil {
		return conv()
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if name == varInput && c.input != nil {
		return c.input, nil
	}
	if v, ok := c.steps[name]; ok {
		return v, nil
	}
	v, err := conv()
	if err != nil {
		return nil, err
	}
	if name == varInput {
		c.input = v
	} else {
		c.steps[name] = v
	}
	return v, nil
}

// activation builds the variables p reads from v.
func (p *Program) activation(v Vars) (map[string]any, error) {
	input, err := v.cache.get(varInput, func() (ref.Val, error) { return p.jsonVar(varInput, v.Input) })
	if err != nil {
		return nil, err
	}
	steps := map[string]any{}
	for _, id := range p.steps {
		raw, ok := v.Steps[id]
		if !ok {
			continue
		}
		name := "steps." + id + ".output"
		out, err := v.cache.get(name, func() (ref.Val, error) { return p.jsonVar(name, raw) })
		if err != nil {
			return nil, err
		}
		steps[id] = map[string]any{output: out}
	}
	act := map[string]any{varInput: input, varSteps: steps, varRunID: v.RunID}
	if p.fanOut {
		item, err := p.jsonVar(varItem, v.Item)
		if err != nil {
			return nil, err
		}
		act[varItem], act[varIndex] = item, int64(v.Index)
	}
	return act, nil
}

// jsonVar reads one variable's JSON (absent: null).
func (p *Program) jsonVar(name string, raw json.RawMessage) (ref.Val, error) {
	if len(raw) == 0 {
		return types.NullValue, nil
	}
	val, err := FromJSON(raw, p.limits.Depth)
	if err != nil {
		return nil, errorf(p.path, RuleJSON, "the value of %s: %s", name, err.Error())
	}
	return val, nil
}

// eval evaluates p over v and checks the result is of p's kind.
func (p *Program) eval(v Vars) (ref.Val, error) {
	act, err := p.activation(v)
	if err != nil {
		return nil, err
	}
	out, _, err := p.prg.Eval(act)
	if err != nil {
		return nil, errorf(p.path, RuleEval, "%s", redact(err.Error(), p.spelled))
	}
	if !p.kind.holds(out) {
		return nil, errorf(p.path, RuleResultType, "the expression must be %s, and its value is a %s", p.kind, out.Type().TypeName())
	}
	return out, nil
}

// holds reports whether a value is of kind k.
func (k Kind) holds(v ref.Val) bool {
	switch k {
	case Bool:
		_, ok := v.(types.Bool)
		return ok
	case List:
		_, ok := v.(traits.Lister)
		return ok
	case String:
		_, ok := v.(types.String)
		return ok
	case Number:
		switch v.(type) {
		case types.Int, types.Uint, types.Double:
			return true
		}
		return false
	case Timestamp:
		_, ok := v.(types.Timestamp)
		return ok
	}
	return true
}

// EvalJSON evaluates p over v and answers its value as JSON (any kind).
func (p *Program) EvalJSON(v Vars) (json.RawMessage, error) {
	out, err := p.eval(v)
	if err != nil {
		return nil, err
	}
	return p.toJSON(out)
}

// toJSON converts a result, naming p's path in an error.
func (p *Program) toJSON(out ref.Val) (json.RawMessage, error) {
	b, err := ToJSON(out, p.limits.ResultBytes, p.limits.Depth)
	switch {
	case errors.Is(err, errTooLarge):
		return nil, errorf(p.path, RuleLimit, "the value is longer than %d bytes of JSON", p.limits.ResultBytes)
	case errors.Is(err, errTooDeep):
		return nil, errorf(p.path, RuleLimit, "the value nests deeper than %d", p.limits.Depth)
	case err != nil:
		return nil, errorf(p.path, RuleEval, "%s", redact(err.Error(), p.spelled))
	}
	return b, nil
}

// EvalBool evaluates a Bool program.
func (p *Program) EvalBool(v Vars) (bool, error) {
	out, err := p.evalKind(v, Bool)
	if err != nil {
		return false, err
	}
	return bool(out.(types.Bool)), nil
}

// EvalString evaluates a String program.
func (p *Program) EvalString(v Vars) (string, error) {
	out, err := p.evalKind(v, String)
	if err != nil {
		return "", err
	}
	return string(out.(types.String)), nil
}

// EvalNumber evaluates a Number program; an int or uint is answered as the
// nearest double. NaN and infinities are refused.
func (p *Program) EvalNumber(v Vars) (float64, error) {
	out, err := p.evalKind(v, Number)
	if err != nil {
		return 0, err
	}
	var f float64
	switch n := out.(type) {
	case types.Int:
		f = float64(n)
	case types.Uint:
		f = float64(n)
	case types.Double:
		f = float64(n)
	}
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, errorf(p.path, RuleResultType, "the expression must be a finite number")
	}
	return f, nil
}

// EvalTimestamp evaluates a Timestamp program; the time is in UTC.
func (p *Program) EvalTimestamp(v Vars) (time.Time, error) {
	out, err := p.evalKind(v, Timestamp)
	if err != nil {
		return time.Time{}, err
	}
	return out.(types.Timestamp).Time.UTC(), nil
}

// EvalList evaluates a List program and answers each element as JSON (a
// forEach's items, each to be recorded with its item task).
func (p *Program) EvalList(v Vars) ([]json.RawMessage, error) {
	out, err := p.evalKind(v, List)
	if err != nil {
		return nil, err
	}
	l := out.(traits.Lister)
	items := []json.RawMessage{}
	total := 0
	for it := l.Iterator(); it.HasNext() == types.True; {
		b, err := p.toJSON(it.Next())
		if err != nil {
			return nil, err
		}
		if total += len(b); total > p.limits.ResultBytes {
			return nil, errorf(p.path, RuleLimit, "the value is longer than %d bytes of JSON", p.limits.ResultBytes)
		}
		items = append(items, b)
	}
	return items, nil
}

// evalKind evaluates p, which must have been compiled for kind k.
func (p *Program) evalKind(v Vars, k Kind) (ref.Val, error) {
	if p.kind != k {
		return nil, errorf(p.path, RuleResultType, "the program was compiled for %s, not %s", p.kind, k)
	}
	return p.eval(v)
}
