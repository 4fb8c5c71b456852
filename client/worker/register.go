package worker

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// handler is one registered activity or compensation, type-erased.
type handler struct {
	name string
	// run decodes the input, runs the function and encodes its output. It
	// answers the reconciliation key derived from the input, if any.
	run func(ctx context.Context, input []byte) (output []byte, key string, err error)
	// verify is set for verifiable activities.
	verify func(ctx context.Context, key string) (VerifyResult, error)
}

// ActivityOption configures one registered activity.
type ActivityOption func(*activityConfig)

type activityConfig struct {
	keyType reflect.Type
	key     func(any) string
	verify  func(ctx context.Context, key string) (VerifyResult, error)
}

// WithIdempotencyKey derives the activity's idempotency key from its input
// (docs/semantics.md#reconciliation). Together with WithVerify it makes the activity verifiable; the
// key is reported with every result as reconciliation_key. Weft's own key for
// the action is in Info(ctx).IdempotencyKey.
func WithIdempotencyKey[In any](fn func(In) string) ActivityOption {
	return func(c *activityConfig) {
		c.keyType = reflect.TypeFor[In]()
		c.key = func(v any) string { return fn(v.(In)) }
	}
}

// WithVerify registers the function that tells whether the side effect
// identified by an idempotency key happened (docs/semantics.md#reconciliation). It needs
// WithIdempotencyKey; together they announce the activity as verifiable, so
// the engine verifies before it redispatches after a possible side effect.
func WithVerify(fn func(ctx context.Context, key string) (VerifyResult, error)) ActivityOption {
	return func(c *activityConfig) { c.verify = fn }
}

// VerifyState is what a verify function found (docs/semantics.md#reconciliation).
type VerifyState = weftv1.VerifyState

// The verify states.
const (
	VerifyNotCompleted               = weftv1.VerifyState_VERIFY_STATE_NOT_COMPLETED
	VerifyCompletedWithResult        = weftv1.VerifyState_VERIFY_STATE_COMPLETED_WITH_RESULT
	VerifyCompletedResultUnavailable = weftv1.VerifyState_VERIFY_STATE_COMPLETED_RESULT_UNAVAILABLE
	VerifyIndeterminate              = weftv1.VerifyState_VERIFY_STATE_INDETERMINATE
)

// VerifyResult answers a verify task.
type VerifyResult struct {
	// State is what verify found.
	State VerifyState
	// Result is the activity's output, for VerifyCompletedWithResult; it is
	// encoded as JSON.
	Result any
	// Diagnostic explains the state, without payloads.
	Diagnostic string
}

// Register registers an activity by name: fn receives the task's input
// decoded from JSON and its output is encoded as JSON. It panics when the name
// is empty or taken, when called after Run, or when WithVerify comes without
// WithIdempotencyKey (all programming errors, like http.ServeMux's).
func Register[In, Out any](w *Worker, name string, fn func(ctx context.Context, in In) (Out, error), opts ...ActivityOption) {
	var cfg activityConfig
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.key != nil && cfg.keyType != reflect.TypeFor[In]() {
		panic(fmt.Sprintf("worker: activity %q: WithIdempotencyKey takes %s, the activity takes %s", name, cfg.keyType, reflect.TypeFor[In]()))
	}
	if cfg.verify != nil && cfg.key == nil {
		panic(fmt.Sprintf("worker: activity %q: WithVerify needs WithIdempotencyKey", name))
	}
	h := &handler{name: name, verify: cfg.verify}
	h.run = func(ctx context.Context, input []byte) ([]byte, string, error) {
		var in In
		if err := decodeInput(input, &in); err != nil {
			return nil, "", err
		}
		key := ""
		if cfg.key != nil {
			key = cfg.key(in)
		}
		out, err := fn(ctx, in)
		if err != nil {
			return nil, key, err
		}
		b, err := json.Marshal(out)
		if err != nil {
			return nil, key, Fail(ClassAgentError, "invalid_output", fmt.Errorf("encode the output as JSON: %w", err))
		}
		return b, key, nil
	}
	w.add(w.activities, "activity", h)
}

// RegisterCompensation registers a compensation operation by name (the
// operation of an action's compensation hook). fn receives the hook's input
// decoded from JSON; Info(ctx).ActionID names the action being rolled back.
func RegisterCompensation[In any](w *Worker, operation string, fn func(ctx context.Context, in In) error) {
	h := &handler{name: operation}
	h.run = func(ctx context.Context, input []byte) ([]byte, string, error) {
		var in In
		if err := decodeInput(input, &in); err != nil {
			return nil, "", err
		}
		return nil, "", fn(ctx, in)
	}
	w.add(w.compensations, "compensation", h)
}

// decodeInput decodes a task's JSON input; an absent input leaves v zero.
func decodeInput(input []byte, v any) error {
	if len(input) == 0 || string(input) == "null" {
		return nil
	}
	if err := json.Unmarshal(input, v); err != nil {
		var typeErr *json.UnmarshalTypeError
		if errors.As(err, &typeErr) {
			err = fmt.Errorf("input field %q cannot hold a JSON %s", typeErr.Field, typeErr.Value)
		} else {
			err = errors.New("input is not valid JSON")
		}
		return Fail(ClassValidation, "invalid_input", err)
	}
	return nil
}
