package eventschema_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/internal/eventschema"
	"github.com/weft-dev/weft/server"
	"github.com/weft-dev/weft/store/memstore"
)

// engineEventTypes is the engine's catalog (engine/runstate/events.go).
var engineEventTypes = []string{
	runstate.EvRunSubmitted, runstate.EvRunApproved, runstate.EvRunQueued, runstate.EvRunStarted, runstate.EvRunBlocked,
	runstate.EvRunUnblocked, runstate.EvRunPaused, runstate.EvRunDrained, runstate.EvRunResumed, runstate.EvRunCompensating,
	runstate.EvRunCompleted, runstate.EvRunFailed, runstate.EvRunCancelled, runstate.EvRunRerun, runstate.EvStepScheduled, runstate.EvStepStarted,
	runstate.EvStepCompleted, runstate.EvStepFailed, runstate.EvStepSkipped, runstate.EvStepCancelled, runstate.EvStepWaiting,
	runstate.EvStepRetried, runstate.EvStepAttemptRecorded, runstate.EvStepVerified, runstate.EvCompensationStarted,
	runstate.EvCompensationSucceeded, runstate.EvCompensationFailed, runstate.EvSignalAccepted, runstate.EvSignalRejected,
	runstate.EvSignalConsumed, runstate.EvStepSleeping, runstate.EvStepIterated, runstate.EvChildRunStarted, runstate.EvChildRunEnded, runstate.EvSearchAttributesUpserted,
	runstate.EvStepFannedOut,
}

const dir = "../../docs/events"

func TestSchemas_EveryEngineEventTypeHasACommittedUpToDateFile(t *testing.T) {
	files, err := eventschema.Generate()
	require.NoError(t, err)
	require.Len(t, files, len(engineEventTypes))
	for _, typ := range engineEventTypes {
		name := typ + ".schema.json"
		want, ok := files[name]
		require.True(t, ok, "no schema for %s", typ)
		got, err := os.ReadFile(filepath.Join(dir, name))
		require.NoError(t, err, "docs/events/%s is missing: run make gen", name)
		require.Equal(t, string(want), string(got), "docs/events/%s is stale: run make gen", name)
	}
}

func TestSchemas_EventsOfARealRunAsTheAPIServesThemValidate(t *testing.T) {
	ctx := context.Background()
	eng, err := engine.New(engine.Config{Store: memstore.New(memstore.Config{})})
	require.NoError(t, err)
	def := definition.Definition{PlanID: "plan", PlanVersion: "1", Actions: []definition.Action{
		{ID: "a", Order: 1, Activity: "x"}, {ID: "b", Order: 2, Activity: "x"}}}
	res, err := eng.SubmitRun(ctx, engine.SubmitParams{TenantID: "t", Definition: def, Start: true, SubmittedBy: "alice"})
	require.NoError(t, err)
	for i := range 2 {
		tasks, err := eng.PollTasks(ctx, engine.PollParams{TenantID: "t", WorkerID: "w1", Activities: []string{"x"}})
		require.NoError(t, err)
		require.Len(t, tasks, 1)
		r := engine.ReportParams{TenantID: "t", Token: tasks[0].Token, WorkerID: "w1"}
		if i == 0 {
			r.Output = json.RawMessage(`{"n":1}`)
			_, err = eng.CompleteTask(ctx, r)
		} else {
			r.ErrorClass, r.Message = definition.ErrorValidation, "bad"
			_, err = eng.FailTask(ctx, r)
		}
		require.NoError(t, err)
	}
	page, err := eng.ListEvents(ctx, engine.ListEventsParams{TenantID: "t", RunID: res.Run.RunID, PageSize: 1000})
	require.NoError(t, err)
	seen := map[string]bool{}
	for _, ev := range page.Events {
		doc := apiJSON(t, &ev)
		require.NoError(t, validate(t, ev.Type, doc), "event %s", ev.Type)
		seen[ev.Type] = true
	}
	for _, typ := range []string{runstate.EvRunSubmitted, runstate.EvRunStarted, runstate.EvStepStarted, runstate.EvStepCompleted, runstate.EvStepFailed, runstate.EvRunFailed} {
		require.True(t, seen[typ], "the run produced %s", typ)
	}

	// The check is not vacuous: a broken event fails it.
	broken := page.Events[0]
	broken.EmittedBy = ""
	require.ErrorContains(t, validate(t, broken.Type, apiJSON(t, &broken)), "emitted_by")
	wrong := apiJSON(t, &page.Events[0])
	require.Error(t, validate(t, runstate.EvRunStarted, wrong), "a RunSubmitted is not a RunStarted")
}

func apiJSON(t *testing.T, ev *runstate.Event) any {
	b, err := server.EventJSON(ev)
	require.NoError(t, err)
	var doc any
	require.NoError(t, json.Unmarshal(b, &doc))
	return doc
}

// validate checks doc against docs/events/<typ>.schema.json. No JSON Schema
// validator library is available offline here, so this checks the keywords
// the generator emits: $ref, type, const, enum, required, properties, items,
// minItems, pattern, minLength, maxLength and minimum.
func validate(t *testing.T, typ string, doc any) error {
	b, err := os.ReadFile(filepath.Join(dir, typ+".schema.json"))
	require.NoError(t, err)
	var root map[string]any
	require.NoError(t, json.Unmarshal(b, &root))
	return check(root, root, doc, "")
}

func check(root, s map[string]any, v any, path string) error {
	if ref, ok := s["$ref"].(string); ok {
		def := root["$defs"].(map[string]any)[strings.TrimPrefix(ref, "#/$defs/")].(map[string]any)
		return check(root, def, v, path)
	}
	if err := checkType(s["type"], v, path); err != nil {
		return err
	}
	if c, ok := s["const"]; ok && c != v {
		return fmt.Errorf("%s: want %v, got %v", path, c, v)
	}
	if enum, ok := s["enum"].([]any); ok && !contains(enum, v) {
		return fmt.Errorf("%s: %v is not one of the enum", path, v)
	}
	switch x := v.(type) {
	case string:
		if p, ok := s["pattern"].(string); ok && !regexp.MustCompile(p).MatchString(x) {
			return fmt.Errorf("%s: does not match %s", path, p)
		}
		if n, ok := s["minLength"].(float64); ok && float64(len([]rune(x))) < n {
			return fmt.Errorf("%s: shorter than %v", path, n)
		}
		if n, ok := s["maxLength"].(float64); ok && float64(len([]rune(x))) > n {
			return fmt.Errorf("%s: longer than %v", path, n)
		}
	case float64:
		if n, ok := s["minimum"].(float64); ok && x < n {
			return fmt.Errorf("%s: below %v", path, n)
		}
	case []any:
		if n, ok := s["minItems"].(float64); ok && float64(len(x)) < n {
			return fmt.Errorf("%s: fewer than %v items", path, n)
		}
		if items, ok := s["items"].(map[string]any); ok {
			for i, it := range x {
				if err := check(root, items, it, fmt.Sprintf("%s[%d]", path, i)); err != nil {
					return err
				}
			}
		}
	case map[string]any:
		for _, r := range asList(s["required"]) {
			if _, ok := x[r.(string)]; !ok {
				return fmt.Errorf("%s: required field %s is missing", join(path, r.(string)), r)
			}
		}
		props, _ := s["properties"].(map[string]any)
		for k, fv := range x {
			if ps, ok := props[k].(map[string]any); ok {
				if err := check(root, ps, fv, join(path, k)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func checkType(want, v any, path string) error {
	if want == nil {
		return nil
	}
	for _, w := range append(asList(want), want) {
		switch w {
		case "string":
			if _, ok := v.(string); ok {
				return nil
			}
		case "integer":
			if f, ok := v.(float64); ok && f == float64(int64(f)) {
				return nil
			}
		case "number":
			if _, ok := v.(float64); ok {
				return nil
			}
		case "boolean":
			if _, ok := v.(bool); ok {
				return nil
			}
		case "object":
			if _, ok := v.(map[string]any); ok {
				return nil
			}
		case "array":
			if _, ok := v.([]any); ok {
				return nil
			}
		}
	}
	return fmt.Errorf("%s: %v is not of type %v", path, v, want)
}

func asList(v any) []any {
	l, _ := v.([]any)
	return l
}

func contains(l []any, v any) bool {
	for _, x := range l {
		if x == v {
			return true
		}
	}
	return false
}

func join(path, k string) string {
	if path == "" {
		return k
	}
	return path + "." + k
}
