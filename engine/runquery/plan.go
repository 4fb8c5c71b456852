package runquery

import (
	"math"
	"slices"
)

// Plan is how a store reads a query's runs: through one index scan when a
// conjunct of the query allows it, or every run when none does. Either
// way each run read is then matched against the whole query; the scan
// only narrows what is read, and never leaves out a run that matches.
type Plan struct {
	// Scan is the index scan, or nil: read every run.
	Scan *Scan
	// Estimate is the estimated number of runs the scan reads (0 when Scan
	// is nil).
	Estimate int64
}

// Scan reads the runs whose Field has one of Points, or lies in Range:
// exactly one of the two is set. Points empty (not nil) means no run can
// match (the conjuncts contradict each other): read nothing.
type Scan struct {
	Field  string
	Type   Type
	Points []Value
	Range  *Range
}

// Range is an interval of values; a nil bound is open.
type Range struct {
	Lower, Upper *Bound
}

// Bound is one end of a Range.
type Bound struct {
	Value     Value
	Inclusive bool
}

// Contains reports whether a run whose field has value v is read by the
// scan.
func (s *Scan) Contains(v Value) bool {
	if s.Range == nil {
		return slices.ContainsFunc(s.Points, func(p Value) bool { o, ok := compare(v, p); return ok && o == 0 })
	}
	return s.Range.contains(v)
}

// contains reports whether v lies in r.
func (r *Range) contains(v Value) bool {
	if r.Lower != nil {
		o, ok := compare(v, r.Lower.Value)
		if !ok || o < 0 || o == 0 && !r.Lower.Inclusive {
			return false
		}
	}
	if r.Upper != nil {
		o, ok := compare(v, r.Upper.Value)
		if !ok || o > 0 || o == 0 && !r.Upper.Inclusive {
			return false
		}
	}
	return true
}

// Estimator estimates how many runs a scan reads; a store with statistics
// passes its own to [Query.Plan]. ok false: no estimate (the default's is
// used).
type Estimator func(s Scan) (runs int64, ok bool)

// The default estimator's figures: the runs one value of a field of each
// selectivity matches, and the runs a range of each kind reads.
const (
	estimateUnique      = 1
	estimateMany        = 100
	estimateFew         = 10_000
	estimateRangeClosed = 100_000
	estimateRangeOpen   = 500_000
	estimatePrefixMany  = 1_000
	estimatePrefixFew   = 50_000
)

// Plan answers the query's plan: the most selective index scan among its
// top-level conjuncts (the terms of its top AND, or the query itself),
// where a conjunct is indexable when it is = or IN on an indexed field, a
// range (<, <=, >, >=) or STARTS_WITH on one, or an OR of equalities on
// the same field. Conjuncts on the same field are merged (points
// intersected, ranges narrowed). est ranks the candidates (nil: the
// schema's selectivities); on a tie the earlier field in the query wins.
func (q *Query) Plan(est Estimator) Plan {
	var scans []Scan
	index := map[string]int{}
	for _, c := range conjuncts(q.root) {
		s, ok := indexScan(c)
		if !ok {
			continue
		}
		if i, seen := index[s.Field]; seen {
			scans[i] = merge(scans[i], s)
			continue
		}
		index[s.Field] = len(scans)
		scans = append(scans, s)
	}
	var best Plan
	for _, s := range scans {
		n := estimate(s, q.fieldOf(s.Field), est)
		if best.Scan == nil || n < best.Estimate {
			s := s
			best = Plan{Scan: &s, Estimate: n}
		}
	}
	return best
}

// FieldScan answers the scan the query's top-level conjuncts on one field
// allow, merged as Plan merges them; ok false when none is indexable. A
// store reading another field's scan may narrow it by this one before a
// run is read, where its index entries hold this field's value.
func (q *Query) FieldScan(name string) (Scan, bool) {
	var out Scan
	found := false
	for _, c := range conjuncts(q.root) {
		s, ok := indexScan(c)
		switch {
		case !ok || s.Field != name:
		case found:
			out = merge(out, s)
		default:
			out, found = s, true
		}
	}
	return out, found
}

// fieldOf answers the checked field called name in the query.
func (q *Query) fieldOf(name string) Field {
	var f Field
	walkCmp(q.root, func(c cmpCond) {
		if c.field.Name == name {
			f = c.field
		}
	})
	return f
}

// walkCmp calls fn on every comparison in c.
func walkCmp(c cond, fn func(cmpCond)) {
	switch x := c.(type) {
	case andCond:
		for _, t := range x {
			walkCmp(t, fn)
		}
	case orCond:
		for _, t := range x {
			walkCmp(t, fn)
		}
	case notCond:
		walkCmp(x.x, fn)
	case cmpCond:
		fn(x)
	}
}

// conjuncts answers the terms of c's top AND, flattened.
func conjuncts(c cond) []cond {
	and, ok := c.(andCond)
	if !ok {
		return []cond{c}
	}
	var out []cond
	for _, t := range and {
		out = append(out, conjuncts(t)...)
	}
	return out
}

// indexScan answers the scan a conjunct allows.
func indexScan(c cond) (Scan, bool) {
	var s Scan
	ok := false
	switch x := c.(type) {
	case cmpCond:
		s, ok = cmpScan(x)
	case orCond:
		s, ok = orScan(x)
	}
	if !ok {
		return Scan{}, false
	}
	return normalize(s), true
}

// cmpScan answers the scan of one comparison.
func cmpScan(c cmpCond) (Scan, bool) {
	if !c.field.Indexed || c.null {
		return Scan{}, false
	}
	s := Scan{Field: c.field.Name, Type: c.field.Type}
	switch c.op {
	case Eq, In:
		s.Points = uniquePoints(c.vals)
	case Lt, Le:
		s.Range = &Range{Upper: &Bound{Value: c.vals[0], Inclusive: c.op == Le}}
	case Gt, Ge:
		s.Range = &Range{Lower: &Bound{Value: c.vals[0], Inclusive: c.op == Ge}}
	case StartsWith:
		s.Range = prefixRange(c.vals[0].S)
	default:
		return Scan{}, false
	}
	return s, true
}

// orScan answers the scan of an OR whose every term is = or IN on the same
// indexed field: the union of their points.
func orScan(o orCond) (Scan, bool) {
	var out Scan
	for i, t := range o {
		c, ok := t.(cmpCond)
		if !ok || c.null || !c.field.Indexed || c.op != Eq && c.op != In || i > 0 && c.field.Name != out.Field {
			return Scan{}, false
		}
		out.Field, out.Type = c.field.Name, c.field.Type
		out.Points = append(out.Points, c.vals...)
	}
	out.Points = uniquePoints(out.Points)
	return out, true
}

// uniquePoints sorts values and drops repeats.
func uniquePoints(vals []Value) []Value {
	out := slices.Clone(vals)
	slices.SortFunc(out, func(a, b Value) int { o, _ := compare(a, b); return o })
	return slices.CompactFunc(out, func(a, b Value) bool { o, ok := compare(a, b); return ok && o == 0 })
}

// prefixRange is the range of keywords that start with p: [p, p+1).
func prefixRange(p string) *Range {
	r := &Range{Lower: &Bound{Value: KeywordValue(p), Inclusive: true}}
	b := []byte(p)
	for len(b) > 0 && b[len(b)-1] == 0xff {
		b = b[:len(b)-1]
	}
	if len(b) > 0 {
		b[len(b)-1]++
		r.Upper = &Bound{Value: KeywordValue(string(b))}
	}
	return r
}

// merge intersects two scans of the same field.
func merge(a, b Scan) Scan {
	switch {
	case a.Range == nil:
		a.Points = slices.DeleteFunc(a.Points, func(v Value) bool { return !b.Contains(v) })
		return a
	case b.Range == nil:
		return merge(b, a)
	}
	a.Range = &Range{Lower: tighter(a.Range.Lower, b.Range.Lower, 1), Upper: tighter(a.Range.Upper, b.Range.Upper, -1)}
	return a
}

// tighter answers the narrower of two bounds: dir 1 for lower bounds (the
// greater wins), -1 for upper ones.
func tighter(x, y *Bound, dir int) *Bound {
	if x == nil {
		return y
	}
	if y == nil {
		return x
	}
	o, _ := compare(x.Value, y.Value)
	switch {
	case o*dir > 0:
		return x
	case o*dir < 0:
		return y
	}
	return &Bound{Value: x.Value, Inclusive: x.Inclusive && y.Inclusive}
}

// estimate answers the runs a scan reads.
func estimate(s Scan, f Field, est Estimator) int64 {
	if est != nil {
		if n, ok := est(s); ok {
			return n
		}
	}
	if s.Range == nil {
		per := map[Selectivity]int64{Unique: estimateUnique, Many: estimateMany, Few: estimateFew}[f.Selectivity]
		return per * int64(len(s.Points))
	}
	if f.Type == Keyword && s.Range.Lower != nil && s.Range.Lower.Inclusive && (s.Range.Upper == nil || !s.Range.Upper.Inclusive) {
		if f.Selectivity == Few {
			return estimatePrefixFew
		}
		return estimatePrefixMany
	}
	if s.Range.Lower != nil && s.Range.Upper != nil {
		return estimateRangeClosed
	}
	return estimateRangeOpen
}

// normalize writes a scan's numbers in its field's type, so that a store
// compares like with like: an int field's double bound becomes the int
// bound that reads the same runs (x > 1.5 is x >= 2), a double field's int
// bound the double that does; a point no value of the field can equal is
// dropped, and a bound no value can pass empties the scan.
func normalize(s Scan) Scan {
	if s.Type != Int && s.Type != Double {
		return s
	}
	if s.Range == nil {
		out := []Value{}
		for _, p := range s.Points {
			if v, exact := convert(p, s.Type); exact {
				out = append(out, v)
			}
		}
		s.Points = uniquePoints(out)
		return s
	}
	lower, lowerEmpty := convertBound(s.Range.Lower, s.Type, 1)
	upper, upperEmpty := convertBound(s.Range.Upper, s.Type, -1)
	if lowerEmpty || upperEmpty {
		return Scan{Field: s.Field, Type: s.Type, Points: []Value{}}
	}
	s.Range = &Range{Lower: lower, Upper: upper}
	return s
}

// convert answers v in type t and whether it is exactly v.
func convert(v Value, t Type) (Value, bool) {
	switch {
	case v.Type == t:
		return v, true
	case t == Int && v.Type == Double:
		if v.F != math.Trunc(v.F) || v.F < math.MinInt64 || v.F >= math.MaxInt64 {
			return Value{}, false
		}
		return IntValue(int64(v.F)), true
	case t == Double && v.Type == Int:
		f := float64(v.I)
		return DoubleValue(f), compareIntDouble(v.I, f) == 0
	}
	return Value{}, false
}

// convertBound converts a bound (dir 1: lower, -1: upper) to type t; empty
// reports a bound no value of type t passes.
func convertBound(b *Bound, t Type, dir int) (*Bound, bool) {
	if b == nil {
		return nil, false
	}
	if v, exact := convert(b.Value, t); exact {
		return &Bound{Value: v, Inclusive: b.Inclusive}, false
	}
	if t == Int { // a double between ints: the next int inward, inclusive
		f := b.Value.F
		r := math.Ceil(f)
		if dir < 0 {
			r = math.Floor(f)
		}
		switch {
		case r >= math.MaxInt64:
			return nil, dir > 0 // above every int: a lower bound empties, an upper one is open
		case r < math.MinInt64:
			return nil, dir < 0
		}
		return &Bound{Value: IntValue(int64(r)), Inclusive: true}, false
	}
	// An int no double equals: the nearest double, inclusive when it lies inward.
	f := float64(b.Value.I)
	inward := compareIntDouble(b.Value.I, f)*dir < 0
	return &Bound{Value: DoubleValue(f), Inclusive: inward}, false
}
