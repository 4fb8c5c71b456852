package server

import (
	"errors"
	"fmt"

	"buf.build/go/protovalidate"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/runstate"
)

// NewEventValidator answers an engine.Config.EventValidator whose schema is
// the proto Event and its payloads with their protovalidate rules
// (docs/semantics.md#event-validation): it converts the event exactly as the API serves it and
// validates the result. A refusal is an *engine.Error whose violations name
// each field path and rule, never a value.
func NewEventValidator() (func(*runstate.Event) error, error) {
	v, err := protovalidate.New()
	if err != nil {
		return nil, fmt.Errorf("event validator: %w", err)
	}
	return func(ev *runstate.Event) error {
		err := v.Validate(eventProto(ev))
		if err == nil {
			return nil
		}
		var verr *protovalidate.ValidationError
		if !errors.As(err, &verr) {
			return fmt.Errorf("event %s: schema rules could not be evaluated: %w", ev.Type, err)
		}
		out := &engine.Error{Code: engine.CodeSchemaValidationFailed, Message: "event " + ev.Type + " fails its schema"}
		for _, pv := range verr.ToProto().GetViolations() {
			out.Violations = append(out.Violations, engine.FieldViolation{
				Field: protovalidate.FieldPathString(pv.GetField()), Rule: pv.GetRuleId(), Message: pv.GetMessage()})
		}
		return out
	}, nil
}
