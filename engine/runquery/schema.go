package runquery

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/weft-dev/weft/engine/runstate"
)

// Type is a field's type: a built-in field's or a search attribute's.
type Type int

// The types.
const (
	Keyword Type = iota + 1
	Int
	Double
	Bool
	Time
)

// String names the type as definitions and messages write it.
func (t Type) String() string {
	switch t {
	case Keyword:
		return "keyword"
	case Int:
		return "int"
	case Double:
		return "double"
	case Bool:
		return "bool"
	case Time:
		return "time"
	}
	return "unknown"
}

// ParseType reads a search attribute's declared type: keyword, int,
// double, bool or time.
func ParseType(s string) (Type, error) {
	for t := Keyword; t <= Time; t++ {
		if t.String() == s {
			return t, nil
		}
	}
	return 0, fmt.Errorf("a search attribute's type is keyword, int, double, bool or time")
}

// Selectivity is how many runs one value of a field usually matches,
// which ranks index scans when no statistics say better.
type Selectivity int

// The selectivities.
const (
	// Few: a handful of distinct values shared by many runs (status, plan).
	Few Selectivity = iota
	// Many: many distinct values (a customer, a submitter, a parent run).
	Many
	// Unique: one run per value (runId).
	Unique
)

// Field is one field a query may name.
type Field struct {
	Name string
	Type Type
	// Values, when set, are a keyword's only values (status).
	Values []string
	// Indexed: a store can read the runs with one value, or a range of
	// values, of the field without scanning.
	Indexed     bool
	Selectivity Selectivity
	// Attribute: a declared search attribute rather than a built-in field.
	Attribute bool
}

// The built-in fields' names.
const (
	FieldStatus      = "status"
	FieldPlan        = "plan"
	FieldPlanVersion = "planVersion"
	FieldRunID       = "runId"
	FieldCreatedAt   = "createdAt"
	FieldStartedAt   = "startedAt"
	FieldEndedAt     = "endedAt"
	FieldSubmittedBy = "submittedBy"
	FieldFailedStep  = "failedStep"
	FieldParentRunID = "parentRunId"
)

// statuses are the run statuses a query may name.
var statuses = []runstate.RunStatus{runstate.RunPending, runstate.RunApproved, runstate.RunQueued, runstate.RunRunning, runstate.RunBlocked,
	runstate.RunPaused, runstate.RunCompensating, runstate.RunCompleted, runstate.RunFailed, runstate.RunCancelled}

// Builtins answers the built-in fields, in the order docs list them.
func Builtins() []Field {
	names := make([]string, len(statuses))
	for i, s := range statuses {
		names[i] = string(s)
	}
	return []Field{
		{Name: FieldStatus, Type: Keyword, Values: names, Indexed: true, Selectivity: Few},
		{Name: FieldPlan, Type: Keyword, Indexed: true, Selectivity: Few},
		{Name: FieldPlanVersion, Type: Keyword, Indexed: true, Selectivity: Few},
		{Name: FieldRunID, Type: Keyword, Indexed: true, Selectivity: Unique},
		{Name: FieldCreatedAt, Type: Time, Indexed: true, Selectivity: Many},
		{Name: FieldStartedAt, Type: Time, Indexed: true, Selectivity: Many},
		{Name: FieldEndedAt, Type: Time, Indexed: true, Selectivity: Many},
		{Name: FieldSubmittedBy, Type: Keyword, Indexed: true, Selectivity: Many},
		{Name: FieldFailedStep, Type: Keyword, Indexed: true, Selectivity: Few},
		{Name: FieldParentRunID, Type: Keyword, Indexed: true, Selectivity: Many},
	}
}

// The bounds of search attributes.
const (
	// MaxAttributes is the most search attributes a schema declares.
	MaxAttributes = 100
	// MaxAttributeName is the longest attribute name.
	MaxAttributeName = 64
	// MaxKeyword is the longest keyword value, in bytes.
	MaxKeyword = 256
)

// attributeName is the pattern of a search attribute's name.
var attributeName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]*$`)

// ValidAttributeName checks a search attribute's name: a letter, then
// letters, digits and underscores, at most 64; not a built-in field's name
// nor a keyword of the language.
func ValidAttributeName(name string) error {
	switch {
	case len(name) > MaxAttributeName || !attributeName.MatchString(name):
		return fmt.Errorf("a search attribute's name is a letter then letters, digits or '_', at most %d", MaxAttributeName)
	case isBuiltin(name):
		return fmt.Errorf("%s is a built-in field, not a search attribute", name)
	}
	if _, ok := keywords[strings.ToUpper(name)]; ok {
		return fmt.Errorf("%s is a word of the query language", strings.ToUpper(name))
	}
	return nil
}

// isBuiltin reports whether name is a built-in field.
func isBuiltin(name string) bool {
	return slices.ContainsFunc(Builtins(), func(f Field) bool { return f.Name == name })
}

// Schema is what a query may name: the built-in fields and the search
// attributes declared (per tenant), each with its type.
type Schema struct {
	fields map[string]Field
}

// NewSchema answers the schema of the built-in fields and attrs, the
// declared search attributes (all indexed, of selectivity Many).
func NewSchema(attrs map[string]Type) (*Schema, error) {
	if len(attrs) > MaxAttributes {
		return nil, fmt.Errorf("at most %d search attributes may be declared", MaxAttributes)
	}
	s := &Schema{fields: map[string]Field{}}
	for _, f := range Builtins() {
		s.fields[f.Name] = f
	}
	for name, t := range attrs {
		if err := ValidAttributeName(name); err != nil {
			return nil, err
		}
		if t < Keyword || t > Time {
			return nil, fmt.Errorf("search attribute %s has no type", name)
		}
		s.fields[name] = Field{Name: name, Type: t, Indexed: true, Selectivity: Many, Attribute: true}
	}
	return s, nil
}

// Field answers the field called name.
func (s *Schema) Field(name string) (Field, bool) {
	f, ok := s.fields[name]
	return f, ok
}

// GroupField checks a CountRuns group-by: status or a keyword, bool or int
// search attribute (a time or a double would make a group per value).
func (s *Schema) GroupField(name string) (Field, error) {
	f, ok := s.Field(name)
	switch {
	case !ok:
		return Field{}, fmt.Errorf("unknown field '%s' to group by", name)
	case name == FieldStatus || name == FieldPlan || name == FieldFailedStep:
		return f, nil
	case f.Attribute && (f.Type == Keyword || f.Type == Bool || f.Type == Int):
		return f, nil
	}
	return Field{}, fmt.Errorf("runs are grouped by status, plan, failedStep or a keyword, bool or int search attribute, not by %s", name)
}
