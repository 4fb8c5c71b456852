package engine

import (
	"encoding/json"
	"maps"
	"slices"
	"time"

	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runquery"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// The run indexes' upkeep (docs/semantics.md#run-queries,
// docs/persisted-format.md): every decision that changes a run's indexed
// fields moves their rs: and sx: entries in its own batch, so the indexes
// never disagree with a committed checkpoint. A run has its entries in the
// layout its checkpoint names: the present one (CompactIndex and
// StartedByCreated) — the status in rs: by position, the plan version in
// the sx: plan entry's value, no startedAt entry while it is the creation
// time —, an older engine's (neither), with the status also in sx: and in
// rs: by run id and the plan version in an sx: entry of its own, or one
// between (CompactIndex alone), with a startedAt entry whenever the run
// started. Its first decision that moves an indexed field moves it to the
// present one.

// indexedFields are the values of a run's checkpoint that its entries
// hold, and the layout they are in; the record's (plan, planVersion,
// submittedBy, parentRunId) never change, and are indexed with the
// submission and removed with the run.
type indexedFields struct {
	status     runstate.RunStatus
	started    time.Time
	ended      time.Time
	failedStep string
	attrs      []runstate.SearchAttribute
	compact    bool
	// startedByCreated leaves out the startedAt entry while started is
	// created (runstate.State.StartedByCreated).
	startedByCreated bool
	created          time.Time
}

// indexedOf answers the indexed fields of a checkpoint (nil: none, a run
// not yet submitted).
func indexedOf(s *runstate.State) indexedFields {
	if s == nil {
		return indexedFields{}
	}
	return indexedFields{status: s.Status, started: s.StartedAt, ended: s.CompletedAt, failedStep: s.FailedStep(), attrs: s.SearchAttributes,
		compact: s.CompactIndex, startedByCreated: s.StartedByCreated, created: s.CreatedAt}
}

// each calls add with each indexed value of the fields that has an sx:
// entry; the status has one only in the older layout.
func (f indexedFields) each(add func(field string, v runquery.Value)) {
	if f.status != "" && !f.compact {
		add(runquery.FieldStatus, runquery.KeywordValue(string(f.status)))
	}
	if !f.started.IsZero() && !(f.startedByCreated && f.started.Equal(f.created)) {
		add(runquery.FieldStartedAt, runquery.TimeValue(f.started))
	}
	if !f.ended.IsZero() {
		add(runquery.FieldEndedAt, runquery.TimeValue(f.ended))
	}
	if f.failedStep != "" {
		add(runquery.FieldFailedStep, runquery.KeywordValue(f.failedStep))
	}
	for _, a := range f.attrs {
		if v, ok := attributeValue(a); ok {
			add(a.Name, v)
		}
	}
}

// indexEntries answers every rs: and sx: entry (key to value) a run with
// fields f has.
func indexEntries(run *record.Run, f indexedFields) map[string]string {
	out := map[string]string{}
	add := func(field string, v runquery.Value) {
		out[string(record.SearchIndexKey(run.TenantID, field, v, run.CreatedAt, run.RunID))] = ""
	}
	f.each(add)
	recordFields(run, f.compact, func(field string, v runquery.Value, value string) {
		out[string(record.SearchIndexKey(run.TenantID, field, v, run.CreatedAt, run.RunID))] = value
	})
	switch {
	case f.status == "":
	case f.compact:
		out[string(record.RunStatusKey(run.TenantID, f.status, run.CreatedAt, run.RunID))] = ""
	default:
		out[string(record.OlderRunStatusKey(run.TenantID, f.status, run.RunID))] = ""
	}
	return out
}

// recordFields calls add with the run record's indexed values and each
// entry's value: in the present layout the plan entry holds the plan
// version, which has no entry of its own.
func recordFields(run *record.Run, compact bool, add func(field string, v runquery.Value, value string)) {
	if compact {
		add(runquery.FieldPlan, runquery.KeywordValue(run.Definition.PlanID), run.Definition.PlanVersion)
	} else {
		add(runquery.FieldPlan, runquery.KeywordValue(run.Definition.PlanID), "")
		add(runquery.FieldPlanVersion, runquery.KeywordValue(run.Definition.PlanVersion), "")
	}
	if run.SubmittedBy != "" {
		add(runquery.FieldSubmittedBy, runquery.KeywordValue(run.SubmittedBy), "")
	}
	if run.Parent != nil {
		add(runquery.FieldParentRunID, runquery.KeywordValue(run.Parent.RunID), "")
	}
}

// attributeValue reads a stored attribute as the query language's value.
func attributeValue(a runstate.SearchAttribute) (runquery.Value, bool) {
	t, err := runquery.ParseType(a.Type)
	if err != nil {
		return runquery.Value{}, false
	}
	v, err := runquery.AttributeValue(t, a.Value)
	return v, err == nil
}

// indexForSearch writes the rs: and sx: entries a decision changed: those
// of the fields before it (a new run: none) that it changed are deleted,
// those after it put, in the present layout — so a run's first such
// decision under this engine also moves its older entries. A run being
// removed is unindexed by its removal (Hide).
func indexForSearch(c *change, before indexedFields) {
	if c.state.Removing {
		return
	}
	after := indexedOf(c.state)
	if !c.newRun && sameIndexed(before, after) {
		return
	}
	if !after.compact || !after.startedByCreated {
		c.state.CompactIndex, after.compact = true, true
		c.state.StartedByCreated, after.startedByCreated = true, true
		c.dirty = true
	}
	old := map[string]string{}
	if !c.newRun {
		old = indexEntries(c.run, before)
	}
	entries := indexEntries(c.run, after)
	for _, k := range slices.Sorted(maps.Keys(entries)) {
		v := entries[k]
		if was, ok := old[k]; ok && was == v {
			delete(old, k) // unchanged
			continue
		}
		delete(old, k) // rewritten with its new value
		c.ops = append(c.ops, store.Put([]byte(k), []byte(v)))
	}
	for _, k := range slices.Sorted(maps.Keys(old)) {
		c.del([]byte(k))
	}
}

// unindexRun deletes every rs: and sx: entry of a run (its removal's first
// batch).
func unindexRun(c *change) {
	for _, k := range slices.Sorted(maps.Keys(indexEntries(c.run, indexedOf(c.state)))) {
		c.del([]byte(k))
	}
}

// sameIndexed reports whether a decision left the indexed fields alone. A
// decision that sets attributes replaces the slice (UpsertAttributes).
func sameIndexed(a, b indexedFields) bool {
	if a.status != b.status || a.compact != b.compact || a.startedByCreated != b.startedByCreated || !a.started.Equal(b.started) || !a.ended.Equal(b.ended) || a.failedStep != b.failedStep ||
		len(a.attrs) != len(b.attrs) {
		return false
	}
	for i := range a.attrs {
		if a.attrs[i].Name != b.attrs[i].Name || a.attrs[i].Type != b.attrs[i].Type || string(a.attrs[i].Value) != string(b.attrs[i].Value) {
			return false
		}
	}
	return true
}

// canonicalJSON answers a value as the engine stores it.
func canonicalJSON(v runquery.Value) json.RawMessage {
	var x any
	switch v.Type {
	case runquery.Keyword:
		x = v.S
	case runquery.Int:
		x = v.I
	case runquery.Double:
		x = v.F
	case runquery.Bool:
		x = v.B
	case runquery.Time:
		x = v.T.UTC().Format(time.RFC3339Nano)
	}
	b, _ := json.Marshal(x) // finite doubles, strings, ints and bools always marshal
	return b
}
