package runstate

import (
	"encoding/json"
	"slices"
	"strings"
)

// EvSearchAttributesUpserted records search attributes set on a run: at
// submission (the submission's and the definition's), or by the worker
// completing a step's task (its StepID and logical attempt are the step's).
const EvSearchAttributesUpserted = "SearchAttributesUpserted"

// SearchAttribute is one search attribute of a run
// (docs/semantics.md#search-attributes): its name, its type (keyword, int,
// double, bool or time, as runquery names them) and its value as JSON — a
// string for a keyword, a number for an int or a double, true or false, an
// RFC 3339 string for a time.
type SearchAttribute struct {
	Name  string          `json:"name" wire:"1"`
	Type  string          `json:"type" wire:"2"`
	Value json.RawMessage `json:"value,omitempty" wire:"3"`
}

// UpsertAttributes answers attrs with set applied — each of set replaces
// the attribute of its name, or is added — sorted by name, in a new slice:
// attrs itself is never changed, so a copy of a state taken before still
// holds the attributes it had.
func UpsertAttributes(attrs, set []SearchAttribute) []SearchAttribute {
	out := make([]SearchAttribute, 0, len(attrs)+len(set))
	out = append(out, attrs...)
	for _, a := range set {
		i, found := slices.BinarySearchFunc(out, a.Name, func(x SearchAttribute, name string) int { return strings.Compare(x.Name, name) })
		if found {
			out[i] = a
			continue
		}
		out = slices.Insert(out, i, a)
	}
	return out
}

// Attribute answers the attribute called name, or false.
func Attribute(attrs []SearchAttribute, name string) (SearchAttribute, bool) {
	i, found := slices.BinarySearchFunc(attrs, name, func(x SearchAttribute, name string) int { return strings.Compare(x.Name, name) })
	if !found {
		return SearchAttribute{}, false
	}
	return attrs[i], true
}

// FailedStep answers the step a query's failedStep names: the step whose
// failure failed the run, else the failed step it is held on, else the one
// whose failure stopped its scheduling; empty when none.
func (s *State) FailedStep() string {
	if s.Error != nil && s.Error.ActionID != "" {
		return s.Error.ActionID
	}
	if s.HeldOn != "" {
		return s.HeldOn
	}
	return s.Failing
}
