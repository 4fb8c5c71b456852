package eventpb

import (
	"errors"
	"fmt"
	"sync"

	"buf.build/go/protovalidate"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// SchemaError is an event its schema refused: each broken rule by the
// field's proto path and the rule id, never a value.
type SchemaError struct {
	// Type is the event's type.
	Type       string
	Violations []definition.Violation
}

// Error implements error.
func (e *SchemaError) Error() string {
	return definition.FormatViolations("event "+e.Type+" fails its schema", e.Violations)
}

// validator is shared: protovalidate compiles each message's rules once and
// is safe for concurrent use.
var validator = sync.OnceValues(func() (protovalidate.Validator, error) { return protovalidate.New() })

// Validate checks an event against the proto Event and its payloads with
// their protovalidate rules (docs/semantics.md#event-validation): it converts the
// event exactly as the API serves it and validates the result. A refusal is
// a *SchemaError; any other error means the rules could not be evaluated.
func Validate(ev *runstate.Event) error {
	v, err := validator()
	if err != nil {
		return fmt.Errorf("event validator: %w", err)
	}
	err = v.Validate(Event(ev))
	if err == nil {
		return nil
	}
	var verr *protovalidate.ValidationError
	if !errors.As(err, &verr) {
		return fmt.Errorf("event %s: schema rules could not be evaluated: %w", ev.Type, err)
	}
	out := &SchemaError{Type: ev.Type}
	for _, pv := range verr.ToProto().GetViolations() {
		out.Violations = append(out.Violations, definition.Violation{
			Field: protovalidate.FieldPathString(pv.GetField()), Rule: pv.GetRuleId(), Message: pv.GetMessage()})
	}
	return out
}
