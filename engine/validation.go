package engine

import (
	"errors"
	"strconv"

	"github.com/weft-dev/weft/engine/eventpb"
	"github.com/weft-dev/weft/engine/runstate"
)

// validateEvents checks every event of a decision against the proto's
// rules (eventpb.Check) before anything is written
// (docs/semantics.md#event-validation): one invalid event fails the whole
// decision, so none of its events, checkpoint or records is persisted.
func (c *recorder) validateEvents() error {
	validate := eventpb.Check
	if c.e != nil && c.e.cfg.validateEvent != nil {
		validate = c.e.cfg.validateEvent
	}
	for i := range c.events {
		if err := validate(&c.events[i]); err != nil {
			return schemaValidationFailed(&c.events[i], err)
		}
	}
	return nil
}

// schemaValidationFailed answers the coded error of an event its schema
// refused: the event type, its place in the log and the broken rules, never
// a payload.
func schemaValidationFailed(ev *runstate.Event, err error) *Error {
	out := &Error{Code: CodeSchemaValidationFailed, RunID: ev.RunID, ActionID: stepActionID(ev.StepID), Err: err,
		Message: "event " + ev.Type + " (run_seq " + strconv.FormatUint(ev.Seq, 10) + ") fails its schema; nothing was persisted"}
	var e *eventpb.SchemaError
	if errors.As(err, &e) && len(e.Violations) > 0 {
		out.Violations = append([]FieldViolation(nil), e.Violations...)
	} else {
		out.Violations = []FieldViolation{{Rule: "event.schema", Message: err.Error()}}
	}
	return out
}

// stepActionID answers the action an event's step id names, or "" for a run-level event.
func stepActionID(stepID string) string {
	if stepID == runstate.RunStepID {
		return ""
	}
	return stepID
}
