package engine

import (
	"context"
	"slices"
	"strings"
	"time"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/runquery"
	"github.com/weft-dev/weft/engine/runstate"
)

// Queries lists and counts a tenant's runs, by the filters of ListRuns and
// the query language (docs/semantics.md#run-queries), and answers the
// tenant's search attributes.
type Queries struct{ e *Engine }

// Queries answers the engine's run queries.
func (e *Engine) Queries() Queries { return Queries{e: e} }

// ListRunsParams filters and pages a tenant's runs.
type ListRunsParams struct {
	TenantID      string
	Statuses      []runstate.RunStatus
	PlanID        string
	PlanVersion   string
	ProjectID     string
	EnvironmentID string
	// RunIDContains keeps only runs whose id contains it.
	RunIDContains string
	CreatedAfter  time.Time
	CreatedBefore time.Time
	// Query keeps only runs matching it (docs/semantics.md#run-queries).
	Query    string
	PageSize int
	// PageToken is the NextPageToken of the previous page.
	PageToken string
}

// ListRunsResult is one page of runs, newest first.
type ListRunsResult struct {
	Runs          []*runstate.Snapshot
	NextPageToken string
}

// ListRuns pages through a tenant's runs, newest first: those the query's
// plan reads (every run without a query), each matched against the query
// and the other filters.
func (q Queries) ListRuns(ctx context.Context, p ListRunsParams) (*ListRunsResult, error) {
	if p.PageSize <= 0 {
		p.PageSize = 100
	}
	query, err := q.compile(ctx, p.TenantID, "query", p.Query)
	if err != nil {
		return nil, err
	}
	out := &ListRunsResult{}
	var named func(string) bool
	if p.RunIDContains != "" {
		named = func(id string) bool { return strings.Contains(id, p.RunIDContains) }
	}
	err = queryRuns(ctx, q.e, p.TenantID, query, p.PageToken, named, func(pos string, r queriedRun) bool {
		if !p.matches(r) {
			return true
		}
		snap := snapshotOf(r.rec, r.state)
		snap.Definition, snap.Input = definition.Definition{}, nil
		out.Runs = append(out.Runs, snap)
		if len(out.Runs) == p.PageSize {
			out.NextPageToken = pos
			return false
		}
		return true
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// compile answers the compiled query, nil when src is empty.
func (q Queries) compile(ctx context.Context, tenant, field, src string) (*runquery.Query, error) {
	if strings.TrimSpace(src) == "" {
		return nil, nil
	}
	return compileQuery(ctx, q.e, tenant, field, src)
}

func (p ListRunsParams) matches(r queriedRun) bool {
	s, rec := r.state, r.rec
	if !strings.Contains(rec.RunID, p.RunIDContains) {
		return false
	}
	if len(p.Statuses) > 0 && !slices.Contains(p.Statuses, s.Status) {
		return false
	}
	switch {
	case p.PlanID != "" && rec.Definition.PlanID != p.PlanID,
		p.PlanVersion != "" && rec.Definition.PlanVersion != p.PlanVersion,
		p.ProjectID != "" && rec.ProjectID != p.ProjectID,
		p.EnvironmentID != "" && rec.EnvironmentID != p.EnvironmentID,
		!p.CreatedAfter.IsZero() && rec.CreatedAt.Before(p.CreatedAfter),
		!p.CreatedBefore.IsZero() && !rec.CreatedAt.Before(p.CreatedBefore):
		return false
	}
	return true
}

// CountRunsParams counts a tenant's runs matching a query.
type CountRunsParams struct {
	TenantID      string
	Query         string
	ProjectID     string
	EnvironmentID string
	// GroupBy, when set, counts per value of this field: status, plan,
	// failedStep or a keyword, bool or int search attribute.
	GroupBy string
}

// RunCount is a count of runs, and its groups when grouped.
type RunCount struct {
	Count  int64
	Groups []RunGroup
}

// RunGroup is the runs with one value of the group-by field (HasValue
// false: the runs without one).
type RunGroup struct {
	Value    runquery.Value
	HasValue bool
	Count    int64
}

// CountRuns counts the runs matching a query, reading what ListRuns reads.
// Groups are ordered largest first, then by value; the runs without a value
// last among equals.
func (q Queries) CountRuns(ctx context.Context, p CountRunsParams) (*RunCount, error) {
	query, err := q.compile(ctx, p.TenantID, "query", p.Query)
	if err != nil {
		return nil, err
	}
	var group *runquery.Field
	if p.GroupBy != "" {
		types, err := tenantAttributeTypes(ctx, q.e.store, p.TenantID)
		if err != nil {
			return nil, err
		}
		schema, err := runquery.NewSchema(types)
		if err != nil {
			return nil, fault.Invalid(fault.Violation("group_by", "group_by.schema", "%v", err))
		}
		f, err := schema.GroupField(p.GroupBy)
		if err != nil {
			return nil, fault.Invalid(fault.Violation("group_by", "group_by.field", "%v", err))
		}
		group = &f
	}
	out := &RunCount{}
	groups := map[string]int{}
	filter := ListRunsParams{ProjectID: p.ProjectID, EnvironmentID: p.EnvironmentID}
	err = queryRuns(ctx, q.e, p.TenantID, query, "", nil, func(_ string, r queriedRun) bool {
		if !filter.matches(r) {
			return true
		}
		out.Count++
		if group == nil {
			return true
		}
		v, ok := r.Field(group.Name)
		key := "-"
		if ok {
			key = "=" + v.Type.String() + ":" + indexKeyOf(v)
		}
		i, seen := groups[key]
		if !seen {
			i = len(out.Groups)
			groups[key] = i
			out.Groups = append(out.Groups, RunGroup{Value: v, HasValue: ok})
		}
		out.Groups[i].Count++
		return true
	})
	if err != nil {
		return nil, err
	}
	orderGroups(out.Groups)
	return out, nil
}

// SearchAttribute is one search attribute a tenant uses and its type.
type SearchAttribute struct {
	Name string
	Type runquery.Type
}

// SearchAttributes answers the search attributes a tenant has used, by
// name, each with the type its first value fixed.
func (q Queries) SearchAttributes(ctx context.Context, tenant string) ([]SearchAttribute, error) {
	types, err := tenantAttributeTypes(ctx, q.e.store, tenant)
	if err != nil {
		return nil, err
	}
	out := make([]SearchAttribute, 0, len(types))
	for name, t := range types {
		out = append(out, SearchAttribute{Name: name, Type: t})
	}
	slices.SortFunc(out, func(a, b SearchAttribute) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// SelectRuns answers the ids of a tenant's runs a query matches, newest
// first, at most limit of them (a batch's selection, fixed when it starts:
// docs/semantics.md#batches). It reads what ListRuns reads.
func (q Queries) SelectRuns(ctx context.Context, tenant, query string, limit int) ([]string, error) {
	compiled, err := q.compile(ctx, tenant, "query", query)
	if err != nil {
		return nil, err
	}
	var out []string
	err = queryRuns(ctx, q.e, tenant, compiled, "", nil, func(_ string, r queriedRun) bool {
		out = append(out, r.rec.RunID)
		return len(out) < limit
	})
	return out, err
}
