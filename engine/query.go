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
// plan's scan names — one value's sx: entries, a range of them, the runs
// created in a range of times, some run ids, or every run when nothing is
// indexable — in the run index's order (newest first), each run read then
// matched against the whole query. The page token is the last run's
// position in that order, the same in every plan, so pages stay stable.

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

// candidatesFor answers the reader of a query's plan's runs for a tenant.
func candidatesFor(ctx context.Context, e *Engine, tenant string, q *runquery.Query, plan runquery.Plan, after string) (candidates, error) {
	s := plan.Scan
	switch {
	case s == nil:
		return tenantRuns(e.store, tenant, nil, nil, after), nil
	case s.Range == nil && len(s.Points) == 0:
		return &listed{}, nil
	case s.Field == runquery.FieldRunID:
		return runIDCandidates(ctx, e, tenant, s.Points, after)
	case s.Field == runquery.FieldCreatedAt:
		return createdRange(e.store, tenant, s, after), nil
	case s.Field == runquery.FieldStatus:
		return statusCandidates(e.store, tenant, s, after), nil
	case s.Field == runquery.FieldPlan || s.Field == runquery.FieldPlanVersion:
		return planCandidates(ctx, e.store, tenant, q, s, after)
	case s.Field == runquery.FieldStartedAt:
		return startedCandidates(ctx, e.store, tenant, s, after)
	}
	return fieldCandidates(ctx, e.store, tenant, s, nil, after)
}

// fieldCandidates reads the sx: entries of a scan of one field — its
// points' or its range's — keeping those whose value keep passes (nil:
// all).
func fieldCandidates(ctx context.Context, st store.Store, tenant string, s *runquery.Scan, keep func([]byte) bool, after string) (candidates, error) {
	if s.Range != nil {
		return rangeCandidates(ctx, st, tenant, s, keep, after)
	}
	scans := make([]peeker, len(s.Points))
	for i, v := range s.Points {
		p := newPrefixScan(st, record.SearchValuePrefix(tenant, s.Field, v), nil, nil, after, false)
		p.keep = keep
		scans[i] = p
	}
	return &merged{scans: scans}, nil
}

// statusCandidates reads the runs of some statuses: each status's rs:
// entries (the present layout) and sx: status entries (an older engine's
// runs, which have no rs: entry by position), merged.
func statusCandidates(st store.Store, tenant string, s *runquery.Scan, after string) candidates {
	var scans []peeker
	for _, v := range s.Points {
		scans = append(scans,
			newPrefixScan(st, record.RunStatusPrefix(tenant, runstate.RunStatus(v.S)), nil, nil, after, false),
			newPrefixScan(st, record.SearchValuePrefix(tenant, runquery.FieldStatus, v), nil, nil, after, false))
	}
	return &merged{scans: scans}
}

// startedCandidates reads the runs of a scan of startedAt: its sx:
// entries, and the runs created in the scan's range, among which are
// those that started as they were created and so have no entry
// (runstate.State.StartedByCreated); the query's predicate passes over
// the others.
func startedCandidates(ctx context.Context, st store.Store, tenant string, s *runquery.Scan, after string) (candidates, error) {
	entries, err := fieldCandidates(ctx, st, tenant, s, nil, after)
	if err != nil {
		return nil, err
	}
	return &merged{scans: append(peekersOf(entries), peekersOf(createdRange(st, tenant, s, after))...)}, nil
}

// planCandidates reads the runs of a scan of plan or planVersion. A plan
// entry holds the run's plan version (the present layout; an older
// engine's run has an empty value and a planVersion entry of its own), so
// a query that names both reads its plans' entries and reads only the
// runs whose version its planVersion conjuncts allow, and one that names
// only planVersion reads the older entries and every plan's entries for
// the versions.
func planCandidates(ctx context.Context, st store.Store, tenant string, q *runquery.Query, s *runquery.Scan, after string) (candidates, error) {
	if s.Field == runquery.FieldPlan {
		var keep func([]byte) bool
		if v, ok := q.FieldScan(runquery.FieldPlanVersion); ok {
			keep = versionIn(&v, true)
		}
		return fieldCandidates(ctx, st, tenant, s, keep, after)
	}
	if p, ok := q.FieldScan(runquery.FieldPlan); ok {
		if p.Range == nil && len(p.Points) == 0 {
			return &listed{}, nil
		}
		return fieldCandidates(ctx, st, tenant, &p, versionIn(s, true), after)
	}
	older, err := fieldCandidates(ctx, st, tenant, s, nil, after)
	if err != nil {
		return nil, err
	}
	plans, err := valuePrefixes(ctx, st, record.SearchFieldPrefix(tenant, runquery.FieldPlan))
	if err != nil {
		return nil, err
	}
	scans := peekersOf(older)
	for _, prefix := range plans {
		p := newPrefixScan(st, prefix, nil, nil, after, false)
		p.keep = versionIn(s, false)
		scans = append(scans, p)
	}
	return &merged{scans: scans}, nil
}

// versionIn answers whether a plan entry's value, its run's plan version,
// lies in a planVersion scan; an empty value (an older engine's entry, or
// a run without a version) is kept when unknown says so.
func versionIn(s *runquery.Scan, unknown bool) func([]byte) bool {
	return func(value []byte) bool {
		if len(value) == 0 {
			return unknown
		}
		return s.Contains(runquery.KeywordValue(string(value)))
	}
}

// valuePrefixes answers the entry prefix of each value a field has in the
// index, one scan of a single entry per value: the entries of one value
// are skipped by starting past them (its encoding then ';').
func valuePrefixes(ctx context.Context, st store.Store, field []byte) ([][]byte, error) {
	var out [][]byte
	start, end := field, append(slices.Clone(field[:len(field)-1]), store.Separator+1)
	for {
		res, err := st.Scan(ctx, &store.ScanParams{Start: start, End: end, Limit: 1})
		if err != nil {
			return nil, err
		}
		if len(res.Items) == 0 {
			return out, nil
		}
		value, _, _ := bytes.Cut(res.Items[0].Key[len(field):], []byte{store.Separator})
		prefix := append(append(slices.Clone(field), value...), store.Separator)
		out = append(out, prefix)
		start = append(prefix[:len(prefix)-1:len(prefix)-1], store.Separator+1)
	}
}

// scanPage is how many entries one store scan of a query reads; a scan
// of one of the prefixes every run is read from (tenantRuns) reads
// firstScanPage first and twice as many each scan after, up to scanPage,
// so that a page of runs reads about as many entries as it answers runs,
// however many statuses they are of.
const scanPage, firstScanPage = 256, 32

// prefixScan reads entries under a prefix (within start and end, when
// set) in key order: the run index's entries (the value is the run id), or
// one status's rs: entries or one value's sx: entries (the key ends with
// the run id). All sort by position.
type prefixScan struct {
	st         store.Store
	prefix     []byte
	start, end []byte
	after      []byte
	runIndex   bool
	// limit is how many entries the next store scan reads.
	limit int
	// keep, when set, passes over the entries whose value it refuses.
	keep  func(value []byte) bool
	items []store.Item
	done  bool
}

func newPrefixScan(st store.Store, prefix, start, end []byte, after string, runIndex bool) *prefixScan {
	p := &prefixScan{st: st, prefix: prefix, start: start, end: end, runIndex: runIndex, limit: scanPage}
	if after != "" {
		p.after = append(slices.Clone(prefix), after...)
	}
	return p
}

// peek answers the next entry without taking it.
func (p *prefixScan) peek(ctx context.Context) (candidate, bool, error) {
	for len(p.items) == 0 || p.keep != nil && !p.keep(p.items[0].Value) {
		if len(p.items) > 0 {
			p.items = p.items[1:]
			continue
		}
		if p.done {
			return candidate{}, false, nil
		}
		params := &store.ScanParams{After: p.after, Limit: p.limit}
		p.limit = min(2*p.limit, scanPage)
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

// peekersOf answers the scans a reader of candidates merges, or the
// reader itself.
func peekersOf(c candidates) []peeker {
	if m, ok := c.(*merged); ok {
		return m.scans
	}
	return []peeker{c.(peeker)}
}

// peeker is a reader of candidates that can show the next one first.
type peeker interface {
	candidates
	peek(ctx context.Context) (candidate, bool, error)
}

// merged yields the union of several scans in position order, each run
// once: a run has one value of a field and its entries in one layout, but
// a decision moving them while the scans read may leave it in two, and an
// older weftd's run has a run index entry beside its rs: entry, each time
// at one position.
type merged struct {
	scans []peeker
	last  string
}

func (m *merged) next(ctx context.Context) (candidate, bool, error) {
	for {
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
		c, ok, err := m.scans[bestAt].next(ctx)
		if err != nil || !ok || c.pos != m.last || m.last == "" {
			m.last = c.pos
			return c, ok, err
		}
	}
}

// listed yields candidates already read and sorted.
type listed struct{ list []candidate }

func (l *listed) peek(context.Context) (candidate, bool, error) {
	if len(l.list) == 0 {
		return candidate{}, false, nil
	}
	return l.list[0], true, nil
}

func (l *listed) next(ctx context.Context) (candidate, bool, error) {
	c, ok, err := l.peek(ctx)
	if ok {
		l.list = l.list[1:]
	}
	return c, ok, err
}

// rangeCandidates reads the sx: entries of a range of one field's values
// — sorted by value, not by position — and answers them in position order:
// a page of a range reads the whole range's entries (O(matches)), and the
// runs of that page. keep, when set, passes over the entries whose value
// it refuses.
func rangeCandidates(ctx context.Context, st store.Store, tenant string, s *runquery.Scan, keep func([]byte) bool, after string) (candidates, error) {
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
			if ok && pos > after && (keep == nil || keep(it.Value)) {
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

// createdRange reads the runs created between two times (tenantRuns):
// the run index's order is newest first, so the upper bound is where it
// starts.
func createdRange(st store.Store, tenant string, s *runquery.Scan, after string) candidates {
	if s.Range == nil { // points: the narrowest range holding them all
		lo, hi := s.Points[0], s.Points[len(s.Points)-1]
		s = &runquery.Scan{Range: &runquery.Range{Lower: &runquery.Bound{Value: lo, Inclusive: true}, Upper: &runquery.Bound{Value: hi, Inclusive: true}}}
	}
	var from, to []byte
	if u := s.Range.Upper; u != nil {
		from = []byte(record.IndexValue(runquery.IntValue(-nanosOf(u.Value))))
	}
	if l := s.Range.Lower; l != nil {
		to = append([]byte(record.IndexValue(runquery.IntValue(-nanosOf(l.Value)))), store.Separator+1)
	}
	if from != nil && to != nil && bytes.Compare(from, to) >= 0 {
		return &listed{} // the bounds contradict each other
	}
	return tenantRuns(st, tenant, from, to, after)
}

// tenantRuns reads a tenant's runs in the run index's order, from one
// position to another (nil: from the first, to the last): each status's
// rs: entries, where every run of the present layout is, merged with the
// run index (ri:), which an older weftd wrote for each run it submitted —
// such a run may have no rs: entry by position. A run in both (an older
// weftd's in the present layout) is at one position in each, and answered
// once.
func tenantRuns(st store.Store, tenant string, from, to []byte, after string) candidates {
	scans := []peeker{positionScan(st, record.RunIndexPrefix(tenant), from, to, after, true)}
	for _, status := range AllRunStatuses {
		scans = append(scans, positionScan(st, record.RunStatusPrefix(tenant, status), from, to, after, false))
	}
	return &merged{scans: scans}
}

// positionScan reads the entries under a prefix whose positions (the key
// after it) lie from one to another (nil: from the first, to the last).
func positionScan(st store.Store, prefix, from, to []byte, after string, runIndex bool) *prefixScan {
	start, end := append(slices.Clone(prefix), from...), store.PrefixEnd(prefix)
	if to != nil {
		end = append(slices.Clone(prefix), to...)
	}
	p := newPrefixScan(st, prefix, start, end, after, runIndex)
	p.limit = firstScanPage
	return p
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
	cands, err := candidatesFor(ctx, e, tenant, q, plan, after)
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
