package engine

import (
	"bytes"
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runquery"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Run queries (docs/semantics.md#run-queries): a query is compiled against
// the tenant's schema (the built-in fields and its search attributes'
// types), planned (runquery.Query.Plan), and run by reading only what the
// plan's scan names — one value's sx: entries, a range of them, a range of
// the run index, some run ids, or every run when nothing is indexable —
// in the run index's order (newest first), each run read then matched
// against the whole query. The page token is the last run's position in
// that order, the same in every plan, so pages stay stable.

// compileQuery compiles a query for a tenant; field names the request's
// field the error points at.
func compileQuery(ctx context.Context, e *Engine, tenant, field, src string) (*runquery.Query, error) {
	types, err := tenantAttributeTypes(ctx, e.store, tenant)
	if err != nil {
		return nil, err
	}
	schema, err := runquery.NewSchema(types)
	if err != nil {
		return nil, fault.Invalid(fault.Violation(field, "query.schema", "%v", err))
	}
	q, err := runquery.Compile(src, schema)
	if err != nil {
		return nil, fault.InvalidArgument("invalid query: "+err.Error(), fault.Violation(field, "query.syntax", "%v", err))
	}
	return q, nil
}

// candidate is a run a scan names, at its position in the run index's
// order.
type candidate struct {
	pos   string
	runID string
}

// candidates yields the runs a plan reads, in position order, after a
// position (empty: from the first).
type candidates interface {
	next(ctx context.Context) (candidate, bool, error)
}

// candidatesFor answers the reader of a plan's runs for a tenant.
func candidatesFor(ctx context.Context, e *Engine, tenant string, plan runquery.Plan, after string) (candidates, error) {
	s := plan.Scan
	switch {
	case s == nil:
		return newPrefixScan(e.store, record.RunIndexPrefix(tenant), nil, nil, after, true), nil
	case s.Range == nil && len(s.Points) == 0:
		return &listed{}, nil
	case s.Field == runquery.FieldRunID:
		return runIDCandidates(ctx, e, tenant, s.Points, after)
	case s.Field == runquery.FieldCreatedAt:
		return createdRange(e.store, tenant, s, after), nil
	case s.Range == nil:
		scans := make([]*prefixScan, len(s.Points))
		for i, v := range s.Points {
			scans[i] = newPrefixScan(e.store, record.SearchValuePrefix(tenant, s.Field, v), nil, nil, after, false)
		}
		return &merged{scans: scans}, nil
	}
	return rangeCandidates(ctx, e.store, tenant, s, after)
}

// scanPage is how many entries one store scan of a query reads.
const scanPage = 256

// prefixScan reads entries under a prefix (within start and end, when
// set) in key order: the run index's entries (the value is the run id) or
// one value's sx: entries (the key ends with the run id). Both sort by
// position.
type prefixScan struct {
	st         store.Store
	prefix     []byte
	start, end []byte
	after      []byte
	runIndex   bool
	items      []store.Item
	done       bool
}

func newPrefixScan(st store.Store, prefix, start, end []byte, after string, runIndex bool) *prefixScan {
	p := &prefixScan{st: st, prefix: prefix, start: start, end: end, runIndex: runIndex}
	if after != "" {
		p.after = append(slices.Clone(prefix), after...)
	}
	return p
}

// peek answers the next entry without taking it.
func (p *prefixScan) peek(ctx context.Context) (candidate, bool, error) {
	for len(p.items) == 0 {
		if p.done {
			return candidate{}, false, nil
		}
		params := &store.ScanParams{After: p.after, Limit: scanPage}
		if p.start != nil || p.end != nil {
			params.Start, params.End = p.start, p.end
		} else {
			params.Prefix = p.prefix
		}
		res, err := p.st.Scan(ctx, params)
		if err != nil {
			return candidate{}, false, err
		}
		p.items, p.done = res.Items, res.Next == nil
		if res.Next != nil {
			p.after = res.Next
		}
	}
	it := p.items[0]
	pos := string(it.Key[len(p.prefix):])
	if p.runIndex {
		return candidate{pos: pos, runID: string(it.Value)}, true, nil
	}
	return candidate{pos: pos, runID: positionRun(pos)}, true, nil
}

func (p *prefixScan) next(ctx context.Context) (candidate, bool, error) {
	c, ok, err := p.peek(ctx)
	if ok {
		p.items = p.items[1:]
	}
	return c, ok, err
}

// positionRun answers the run of a position: after its time component.
func positionRun(pos string) string {
	_, run, _ := strings.Cut(pos, string(store.Separator))
	id, err := store.UnescapeComponent(run)
	if err != nil {
		return run
	}
	return id
}

// merged yields the union of several point scans in position order (a
// run has one value of a field, so no run is named twice).
type merged struct{ scans []*prefixScan }

func (m *merged) next(ctx context.Context) (candidate, bool, error) {
	best, bestAt := candidate{}, -1
	for i, s := range m.scans {
		c, ok, err := s.peek(ctx)
		if err != nil {
			return candidate{}, false, err
		}
		if ok && (bestAt < 0 || c.pos < best.pos) {
			best, bestAt = c, i
		}
	}
	if bestAt < 0 {
		return candidate{}, false, nil
	}
	return m.scans[bestAt].next(ctx)
}

// listed yields candidates already read and sorted.
type listed struct{ list []candidate }

func (l *listed) next(context.Context) (candidate, bool, error) {
	if len(l.list) == 0 {
		return candidate{}, false, nil
	}
	c := l.list[0]
	l.list = l.list[1:]
	return c, true, nil
}

// rangeCandidates reads the sx: entries of a range of one field's values
// — sorted by value, not by position — and answers them in position order:
// a page of a range reads the whole range's entries (O(matches)), and the
// runs of that page.
func rangeCandidates(ctx context.Context, st store.Store, tenant string, s *runquery.Scan, after string) (candidates, error) {
	prefix := record.SearchFieldPrefix(tenant, s.Field)
	start, end := rangeKeys(prefix, s.Range)
	if bytes.Compare(start, end) >= 0 {
		return &listed{}, nil // the bounds contradict each other
	}
	var out []candidate
	params := &store.ScanParams{Start: start, End: end, Limit: store.MaxScanLimit}
	for {
		res, err := st.Scan(ctx, params)
		if err != nil {
			return nil, err
		}
		for _, it := range res.Items {
			_, pos, ok := strings.Cut(string(it.Key[len(prefix):]), string(store.Separator)) // after the value
			if ok && pos > after {
				out = append(out, candidate{pos: pos, runID: positionRun(pos)})
			}
		}
		if res.Next == nil {
			break
		}
		params.After = res.Next
	}
	slices.SortFunc(out, func(a, b candidate) int { return strings.Compare(a.pos, b.pos) })
	return &listed{list: out}, nil
}

// rangeKeys answers the keys of a range of values under a field's prefix:
// a value's entries are prefix, its encoding, ':' and a position, so
// encoding+';' is past all of them.
func rangeKeys(prefix []byte, r *runquery.Range) (start, end []byte) {
	start, end = prefix, append(slices.Clone(prefix[:len(prefix)-1]), store.Separator+1)
	if r.Lower != nil {
		start = append(slices.Clone(prefix), record.IndexValue(r.Lower.Value)...)
		if !r.Lower.Inclusive {
			start = append(start, store.Separator+1)
		}
	}
	if r.Upper != nil {
		end = append(slices.Clone(prefix), record.IndexValue(r.Upper.Value)...)
		if r.Upper.Inclusive {
			end = append(end, store.Separator+1)
		}
	}
	return start, end
}

// createdRange reads the run index between two creation times: it is
// newest first, so the upper bound is its start.
func createdRange(st store.Store, tenant string, s *runquery.Scan, after string) candidates {
	prefix := record.RunIndexPrefix(tenant)
	var start, end []byte
	if s.Range == nil { // points: the narrowest range holding them all
		lo, hi := s.Points[0], s.Points[len(s.Points)-1]
		s = &runquery.Scan{Range: &runquery.Range{Lower: &runquery.Bound{Value: lo, Inclusive: true}, Upper: &runquery.Bound{Value: hi, Inclusive: true}}}
	}
	if u := s.Range.Upper; u != nil {
		start = append(slices.Clone(prefix), record.IndexValue(runquery.IntValue(-nanosOf(u.Value)))...)
	} else {
		start = prefix
	}
	if l := s.Range.Lower; l != nil {
		end = append(slices.Clone(prefix), record.IndexValue(runquery.IntValue(-nanosOf(l.Value)))...)
		end = append(end, store.Separator+1)
	} else {
		end = append(slices.Clone(prefix[:len(prefix)-1]), store.Separator+1)
	}
	if bytes.Compare(start, end) >= 0 {
		return &listed{} // the bounds contradict each other
	}
	return newPrefixScan(st, prefix, start, end, after, true)
}

// nanosOf answers a time value's nanoseconds, clamped to what a key holds.
func nanosOf(v runquery.Value) int64 {
	t := v.T
	switch {
	case t.Before(record.MinIndexTime):
		t = record.MinIndexTime
	case t.After(record.MaxIndexTime):
		t = record.MaxIndexTime
	}
	n := t.UnixNano()
	if n == -1<<63 {
		n++ // its negation must be an int64 too
	}
	return n
}

// runIDCandidates reads the runs a query names by id.
func runIDCandidates(ctx context.Context, e *Engine, tenant string, ids []runquery.Value, after string) (candidates, error) {
	var out []candidate
	for _, v := range ids {
		rec, err := e.records.RunFor(ctx, tenant, v.S)
		if CodeOf(err) == CodeNotFound {
			continue
		}
		if err != nil {
			return nil, err
		}
		if pos := record.RunIndexPosition(rec.CreatedAt, rec.RunID); pos > after {
			out = append(out, candidate{pos: pos, runID: rec.RunID})
		}
	}
	slices.SortFunc(out, func(a, b candidate) int { return strings.Compare(a.pos, b.pos) })
	return &listed{list: out}, nil
}

// queriedRun is a run a query read: its record and checkpoint.
type queriedRun struct {
	rec   *record.Run
	state *runstate.State
}

// loadQueried reads a candidate run of the tenant; ok false when it is
// gone (deleted, removed, another tenant's).
func loadQueried(ctx context.Context, e *Engine, tenant, runID string) (queriedRun, bool, error) {
	rec, err := e.records.RunFor(ctx, tenant, runID)
	if err == nil {
		var state *runstate.State
		if state, _, err = e.records.LoadCheckpoint(ctx, runID); err == nil {
			return queriedRun{rec: rec, state: state}, true, nil
		}
	}
	if CodeOf(err) == CodeNotFound {
		return queriedRun{}, false, nil
	}
	return queriedRun{}, false, err
}

// Field implements runquery.Fields over the run's record and checkpoint.
func (r queriedRun) Field(name string) (runquery.Value, bool) {
	s, rec := r.state, r.rec
	keyword := func(v string) (runquery.Value, bool) { return runquery.KeywordValue(v), v != "" }
	switch name {
	case runquery.FieldStatus:
		return keyword(string(s.Status))
	case runquery.FieldPlan:
		return keyword(rec.Definition.PlanID)
	case runquery.FieldPlanVersion:
		return keyword(rec.Definition.PlanVersion)
	case runquery.FieldRunID:
		return keyword(rec.RunID)
	case runquery.FieldSubmittedBy:
		return keyword(rec.SubmittedBy)
	case runquery.FieldFailedStep:
		return keyword(s.FailedStep())
	case runquery.FieldParentRunID:
		if rec.Parent == nil {
			return runquery.Value{}, false
		}
		return keyword(rec.Parent.RunID)
	case runquery.FieldCreatedAt:
		return runquery.TimeValue(rec.CreatedAt), true
	case runquery.FieldStartedAt:
		return runquery.TimeValue(s.StartedAt), !s.StartedAt.IsZero()
	case runquery.FieldEndedAt:
		return runquery.TimeValue(s.CompletedAt), !s.CompletedAt.IsZero()
	}
	a, ok := runstate.Attribute(s.SearchAttributes, name)
	if !ok {
		return runquery.Value{}, false
	}
	return attributeValue(a)
}

// queryRuns walks the runs of a tenant a query matches, in the run
// index's order after a position, calling each until it answers false.
// named, when set, passes over a run by its id before it is read.
func queryRuns(ctx context.Context, e *Engine, tenant string, q *runquery.Query, after string, named func(runID string) bool,
	each func(pos string, r queriedRun) bool) error {
	plan := runquery.Plan{}
	if q != nil {
		plan = q.Plan(nil)
	}
	cands, err := candidatesFor(ctx, e, tenant, plan, after)
	if err != nil {
		return err
	}
	for {
		c, ok, err := cands.next(ctx)
		if err != nil || !ok {
			return err
		}
		if named != nil && !named(c.runID) {
			continue // the index entry names the run: no need to read it
		}
		r, found, err := loadQueried(ctx, e, tenant, c.runID)
		if err != nil {
			return err
		}
		if !found || q != nil && !q.Match(r) {
			continue
		}
		if !each(c.pos, r) {
			return nil
		}
	}
}

// indexKeyOf answers a value's index encoding: one per distinct value.
func indexKeyOf(v runquery.Value) string { return record.IndexValue(v) }

// orderGroups sorts groups largest first, then by value.
func orderGroups(groups []RunGroup) {
	slices.SortFunc(groups, func(a, b RunGroup) int {
		if c := cmp.Compare(b.Count, a.Count); c != 0 {
			return c
		}
		switch {
		case !a.HasValue || !b.HasValue:
			return cmp.Compare(boolRank(a.HasValue), boolRank(b.HasValue))
		}
		return strings.Compare(record.IndexValue(a.Value), record.IndexValue(b.Value))
	})
}

func boolRank(b bool) int {
	if b {
		return 0
	}
	return 1
}
