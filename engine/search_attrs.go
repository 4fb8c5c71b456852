package engine

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/weft-dev/weft/engine/expr"
	"github.com/weft-dev/weft/engine/internal/fault"
	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runquery"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Search attributes (docs/semantics.md#search-attributes): checked against
// the tenant's types (the first value stored under a name fixes its type),
// stored in the checkpoint, recorded by a SearchAttributesUpserted event
// and indexed (search.go), all in the batch of the decision that sets them.

// MaxRunAttributes is the most search attributes a run carries.
const MaxRunAttributes = 100

// MaxTenantAttributes is the most search attribute names a tenant uses:
// what one query schema declares (runquery.MaxAttributes).
const MaxTenantAttributes = runquery.MaxAttributes

// attributeTypes are a tenant's search attributes' types, by name.
type attributeTypes map[string]runquery.Type

// tenantAttributeTypes reads a tenant's search attribute types: one scan
// of at most MaxTenantAttributes (and a few racing first uses) entries.
func tenantAttributeTypes(ctx context.Context, st store.Store, tenant string) (attributeTypes, error) {
	prefix := record.SearchTypePrefix(tenant)
	out := attributeTypes{}
	var after []byte
	for {
		res, err := st.Scan(ctx, &store.ScanParams{Prefix: prefix, After: after, Limit: 2 * MaxTenantAttributes})
		if err != nil {
			return nil, err
		}
		for _, it := range res.Items {
			name, err := store.UnescapeComponent(string(it.Key[len(prefix):]))
			if err != nil {
				continue
			}
			if t, err := runquery.ParseType(string(it.Value)); err == nil {
				out[name] = t
			}
		}
		if res.Next == nil {
			return out, nil
		}
		after = res.Next
	}
}

// attributeChange is search attributes a decision sets: checked, in the
// stored form, sorted by name, and the names new to the tenant, whose
// types it records on an absent-condition.
type attributeChange struct {
	set      []runstate.SearchAttribute
	newTypes []runstate.SearchAttribute
}

// checkAttributes checks attributes to set on a run that has current
// (field is the request's path of them, as "search_attributes"): each
// name, type and value, the types against the tenant's, and the counts.
// The error names the attribute and the rule, never its value.
func checkAttributes(field string, set, current []runstate.SearchAttribute, types attributeTypes) (attributeChange, error) {
	var out attributeChange
	if len(set) == 0 {
		return out, nil
	}
	seen := map[string]bool{}
	for _, a := range set {
		path := field + "." + a.Name
		if seen[a.Name] {
			return out, fault.Invalid(fault.Violation(path, "search_attributes.unique", "search attribute %s is given twice", a.Name))
		}
		seen[a.Name] = true
		if err := runquery.ValidAttributeName(a.Name); err != nil {
			return out, fault.Invalid(fault.Violation(path, "search_attributes.name", "%v", err))
		}
		t, err := runquery.ParseType(a.Type)
		if err != nil {
			return out, fault.Invalid(fault.Violation(path, "search_attributes.type", "%v", err))
		}
		v, err := runquery.AttributeValue(t, a.Value)
		if err != nil {
			return out, fault.Invalid(fault.Violation(path, "search_attributes.value", "search attribute %s: %v", a.Name, err))
		}
		if t == runquery.Time && (v.T.Before(record.MinIndexTime) || v.T.After(record.MaxIndexTime)) {
			return out, fault.Invalid(fault.Violation(path, "search_attributes.value",
				"search attribute %s: a time is between the years 1678 and 2262", a.Name))
		}
		known, ok := types[a.Name]
		switch {
		case ok && known != t:
			return out, fault.Invalid(fault.Violation(path, "search_attributes.type",
				"search attribute %s is a %s in this tenant (its first value fixed it), not a %s", a.Name, known, t))
		case !ok:
			out.newTypes = append(out.newTypes, runstate.SearchAttribute{Name: a.Name, Type: t.String()})
		}
		out.set = append(out.set, runstate.SearchAttribute{Name: a.Name, Type: t.String(), Value: canonicalJSON(v)})
	}
	slices.SortFunc(out.set, func(a, b runstate.SearchAttribute) int { return strings.Compare(a.Name, b.Name) })
	if n := len(runstate.UpsertAttributes(current, out.set)); n > MaxRunAttributes {
		return out, fault.Invalid(fault.Violation(field, "search_attributes.count",
			"a run carries at most %d search attributes; this would make %d", MaxRunAttributes, n))
	}
	if len(types)+len(out.newTypes) > MaxTenantAttributes {
		return out, fault.Invalid(fault.Violation(field, "search_attributes.tenant_count",
			"a tenant uses at most %d search attribute names; this would make %d", MaxTenantAttributes, len(types)+len(out.newTypes)))
	}
	return out, nil
}

// apply records the change in a decision: the run's attributes, the
// event, and the new names' types on their absent-conditions. stepID and
// logical key the event: the run's (RUN, 1) at submission, the step's
// attempt for a worker's.
func (a attributeChange) apply(c *change, stepID string, logical int) {
	if len(a.set) == 0 {
		return
	}
	c.state.SearchAttributes = runstate.UpsertAttributes(c.state.SearchAttributes, a.set)
	c.emit(runstate.EvSearchAttributesUpserted, stepID, logical, 0, runstate.EventData{Attributes: a.set})
	for _, t := range a.newTypes {
		key := record.SearchTypeKey(c.run.TenantID, t.Name)
		c.require(store.IfAbsent(key))
		c.ops = append(c.ops, store.Put(key, []byte(t.Type)))
	}
	c.dirty = true
}

// lostTypeRace reports whether a decision failed because another one
// recorded the type of a name it took as new first: it is checked again
// against the type now stored.
func lostTypeRace(err error) bool {
	var cf *store.ConditionFailedError
	return errors.As(err, &cf) && strings.HasPrefix(string(cf.Key), string(keyspace.SearchType.KeyPrefix()))
}

// submissionAttributes answers the attributes a submission sets: its
// definition's (evaluated over the input, field definition.search_attributes)
// under its own (search_attributes), each checked against the tenant's
// types; none read nothing.
func submissionAttributes(ctx context.Context, e *Engine, rec *record.Run, p SubmitParams) (attributeChange, error) {
	if len(p.SearchAttributes) == 0 && len(rec.Definition.SearchAttributes) == 0 {
		return attributeChange{}, nil
	}
	fromDef, err := rec.Definition.EvalSearchAttributes(rec.Input, rec.RunID)
	if err != nil {
		var one *expr.Error
		path := "definition.search_attributes"
		if errors.As(err, &one) {
			path = "definition." + one.Path
		}
		return attributeChange{}, fault.Invalid(exprViolations(path, err)...)
	}
	types, err := tenantAttributeTypes(ctx, e.store, p.TenantID)
	if err != nil {
		return attributeChange{}, err
	}
	own, err := checkAttributes("search_attributes", p.SearchAttributes, nil, types)
	if err != nil {
		return attributeChange{}, err
	}
	var defSet []runstate.SearchAttribute
	for _, a := range fromDef {
		if _, mine := runstate.Attribute(own.set, a.Name); !mine {
			defSet = append(defSet, runstate.SearchAttribute{Name: a.Name, Type: a.Type, Value: a.Value})
		}
	}
	def, err := checkAttributes("definition.search_attributes", defSet, own.set, types)
	if err != nil {
		return attributeChange{}, err
	}
	merged := attributeChange{set: runstate.UpsertAttributes(own.set, def.set), newTypes: append(own.newTypes, def.newTypes...)}
	if n := len(types) + len(merged.newTypes); n > MaxTenantAttributes {
		return attributeChange{}, fault.Invalid(fault.Violation("search_attributes", "search_attributes.tenant_count",
			"a tenant uses at most %d search attribute names; this would make %d", MaxTenantAttributes, n))
	}
	return merged, nil
}

// reportedAttributeTypes reads the tenant's attribute types for a
// completion that sets attributes (none read nothing): the decision checks
// them against these, and the run's own, as a rule over prepared reads.
func reportedAttributeTypes(ctx context.Context, e *Engine, r ReportParams) (attributeTypes, error) {
	if len(r.SearchAttributes) == 0 {
		return nil, nil
	}
	return tenantAttributeTypes(ctx, e.store, r.TenantID)
}
