package engine

import (
	"encoding/json"
	"time"

	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runquery"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// The search index's upkeep (docs/semantics.md#run-queries): every
// decision that changes a run's indexed fields moves their sx: entries in
// its own batch, so the index never disagrees with a committed checkpoint.

// indexedFields are the values of a run's checkpoint that its sx: entries
// hold; the record's (plan, planVersion, submittedBy, parentRunId) never change, and
// are indexed with the submission and removed with the run.
type indexedFields struct {
	status     runstate.RunStatus
	started    time.Time
	ended      time.Time
	failedStep string
	attrs      []runstate.SearchAttribute
}

// indexedOf answers the indexed fields of a checkpoint (nil: none, a run
// not yet submitted).
func indexedOf(s *runstate.State) indexedFields {
	if s == nil {
		return indexedFields{}
	}
	return indexedFields{status: s.Status, started: s.StartedAt, ended: s.CompletedAt, failedStep: s.FailedStep(), attrs: s.SearchAttributes}
}

// each calls add with each indexed value of the fields.
func (f indexedFields) each(add func(field string, v runquery.Value)) {
	if f.status != "" {
		add(runquery.FieldStatus, runquery.KeywordValue(string(f.status)))
	}
	if !f.started.IsZero() {
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

// recordFields calls add with the run record's indexed values.
func recordFields(run *record.Run, add func(field string, v runquery.Value)) {
	add(runquery.FieldPlan, runquery.KeywordValue(run.Definition.PlanID))
	add(runquery.FieldPlanVersion, runquery.KeywordValue(run.Definition.PlanVersion))
	if run.SubmittedBy != "" {
		add(runquery.FieldSubmittedBy, runquery.KeywordValue(run.SubmittedBy))
	}
	if run.Parent != nil {
		add(runquery.FieldParentRunID, runquery.KeywordValue(run.Parent.RunID))
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

// indexForSearch writes the sx: entries a decision changed: those of the
// fields before it (a new run: none) that it changed are deleted, those
// after it put. A run being removed is unindexed by its removal (Hide).
func indexForSearch(c *change, before indexedFields) {
	if c.state.Removing {
		return
	}
	after := indexedOf(c.state)
	if !c.newRun && sameIndexed(before, after) {
		return
	}
	run := c.run
	key := func(field string, v runquery.Value) string {
		return string(record.SearchIndexKey(run.TenantID, field, v, run.CreatedAt, run.RunID))
	}
	old := map[string]bool{}
	before.each(func(field string, v runquery.Value) { old[key(field, v)] = true })
	put := func(field string, v runquery.Value) {
		k := key(field, v)
		if old[k] {
			delete(old, k) // unchanged
			return
		}
		c.ops = append(c.ops, store.Put([]byte(k), nil))
	}
	after.each(put)
	if c.newRun {
		recordFields(run, put)
	}
	for k := range old {
		c.ops = append(c.ops, store.Delete([]byte(k)))
	}
}

// unindexRun deletes every sx: entry of a run (its removal's first batch).
func unindexRun(c *change) {
	del := func(field string, v runquery.Value) {
		c.ops = append(c.ops, store.Delete(record.SearchIndexKey(c.run.TenantID, field, v, c.run.CreatedAt, c.run.RunID)))
	}
	indexedOf(c.state).each(del)
	recordFields(c.run, del)
}

// sameIndexed reports whether a decision left the indexed fields alone. A
// decision that sets attributes replaces the slice (UpsertAttributes).
func sameIndexed(a, b indexedFields) bool {
	if a.status != b.status || !a.started.Equal(b.started) || !a.ended.Equal(b.ended) || a.failedStep != b.failedStep ||
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
