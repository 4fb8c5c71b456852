package expr

import (
	"cmp"
	"slices"

	"cel.dev/cel-go/common/ast"
	"cel.dev/cel-go/common/types"
	"cel.dev/cel-go/common/types/ref"
	"cel.dev/cel-go/common/types/traits"
	"cel.dev/cel-go/interpreter"
)

// sortedMap is a map that iterates in key order. cel-go iterates its maps
// in Go's map order, which differs from one run to the next; a
// comprehension over a map (m.map(k, k), m.all(k, …)) would then answer
// differently each time. Every map a comprehension ranges over is wrapped
// in one (see [orderRanges]), and every object read from JSON is one.
type sortedMap struct {
	traits.Mapper
	keys []ref.Val
}

// newSortedMap wraps m (a sortedMap is answered as it is).
func newSortedMap(m traits.Mapper) *sortedMap {
	if s, ok := m.(*sortedMap); ok {
		return s
	}
	var keys []ref.Val
	for it := m.Iterator(); it.HasNext() == types.True; {
		keys = append(keys, it.Next())
	}
	slices.SortFunc(keys, compareKeys)
	return &sortedMap{Mapper: m, keys: keys}
}

// Iterator implements traits.Iterable: the keys in order.
func (m *sortedMap) Iterator() traits.Iterator {
	return &keyIterator{keys: m.keys}
}

// Fold implements traits.Foldable: the entries in key order.
func (m *sortedMap) Fold(f traits.Folder) {
	for _, k := range m.keys {
		if !f.FoldEntry(k, m.Get(k)) {
			return
		}
	}
}

// keyIterator iterates a sortedMap's keys.
type keyIterator struct {
	ref.Val
	keys []ref.Val
	next int
}

// HasNext implements traits.Iterator.
func (it *keyIterator) HasNext() ref.Val { return types.Bool(it.next < len(it.keys)) }

// Next implements traits.Iterator.
func (it *keyIterator) Next() ref.Val {
	if it.next >= len(it.keys) {
		return nil
	}
	it.next++
	return it.keys[it.next-1]
}

// keyRank orders the kinds of map keys CEL allows.
func keyRank(v ref.Val) int {
	switch v.(type) {
	case types.Bool:
		return 0
	case types.Int:
		return 1
	case types.Uint:
		return 2
	case types.String:
		return 3
	}
	return 4
}

// compareKeys orders map keys: booleans, ints, uints, strings, each by
// value.
func compareKeys(a, b ref.Val) int {
	if c := cmp.Compare(keyRank(a), keyRank(b)); c != 0 {
		return c
	}
	switch x := a.(type) {
	case types.Bool:
		return cmp.Compare(boolInt(bool(x)), boolInt(bool(b.(types.Bool))))
	case types.Int:
		return cmp.Compare(x, b.(types.Int))
	case types.Uint:
		return cmp.Compare(x, b.(types.Uint))
	case types.String:
		return cmp.Compare(x, b.(types.String))
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// rangeIDs answers the ids of every comprehension's range in e.
func rangeIDs(e ast.Expr) map[int64]bool {
	ids := map[int64]bool{}
	visit(e, func(x ast.Expr) {
		if x.Kind() == ast.ComprehensionKind {
			ids[x.AsComprehension().IterRange().ID()] = true
		}
	})
	return ids
}

// orderRanges is the decorator that makes every comprehension over a map
// iterate it in key order: it wraps the range's value in a sortedMap.
func orderRanges(ids map[int64]bool) interpreter.InterpretableDecoratorV2 {
	return func(i interpreter.InterpretableV2) (interpreter.InterpretableV2, error) {
		if !ids[i.ID()] {
			return i, nil
		}
		return &sortedRange{InterpretableV2: i}, nil
	}
}

// sortedRange evaluates a comprehension's range, a map becoming a
// sortedMap.
type sortedRange struct {
	interpreter.InterpretableV2
}

// Exec implements interpreter.InterpretableV2.
func (r *sortedRange) Exec(frame *interpreter.ExecutionFrame) ref.Val {
	return sortValue(r.InterpretableV2.Exec(frame))
}

// Eval implements interpreter.Interpretable.
func (r *sortedRange) Eval(a interpreter.Activation) ref.Val {
	return sortValue(r.InterpretableV2.Eval(a))
}

// sortValue wraps a map in a sortedMap and answers anything else as it is.
func sortValue(v ref.Val) ref.Val {
	if m, ok := v.(traits.Mapper); ok {
		return newSortedMap(m)
	}
	return v
}

// visit calls f on e and every expression below it.
func visit(e ast.Expr, f func(ast.Expr)) {
	if e == nil {
		return
	}
	f(e)
	for _, c := range children(e) {
		visit(c, f)
	}
}

// children answers e's direct subexpressions.
func children(e ast.Expr) []ast.Expr {
	switch e.Kind() {
	case ast.SelectKind:
		return []ast.Expr{e.AsSelect().Operand()}
	case ast.CallKind:
		c := e.AsCall()
		out := slices.Clone(c.Args())
		if c.IsMemberFunction() {
			out = append([]ast.Expr{c.Target()}, out...)
		}
		return out
	case ast.ListKind:
		return e.AsList().Elements()
	case ast.MapKind:
		var out []ast.Expr
		for _, en := range e.AsMap().Entries() {
			out = append(out, en.AsMapEntry().Key(), en.AsMapEntry().Value())
		}
		return out
	case ast.StructKind:
		var out []ast.Expr
		for _, f := range e.AsStruct().Fields() {
			out = append(out, f.AsStructField().Value())
		}
		return out
	case ast.ComprehensionKind:
		c := e.AsComprehension()
		return []ast.Expr{c.IterRange(), c.AccuInit(), c.LoopCondition(), c.LoopStep(), c.Result()}
	}
	return nil
}
