package server

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/eventpb"
	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/internal/testkit/fill"
)

// The conversions that allocate their messages in blocks (runProto,
// tasksProto, jsonValue) and share a definition's message
// (sharedDefinitionProto) answer what converting every message on its own
// answers: these are that plain conversion, for the tests to compare with.

func plainRunProto(s *runstate.Snapshot) *weftv1.Run {
	if s == nil {
		return nil
	}
	out := &weftv1.Run{
		RunId: s.RunID, TenantId: s.TenantID, ProjectId: s.ProjectID, EnvironmentId: s.EnvironmentID,
		PlanId: s.PlanID, PlanVersion: s.PlanVersion, RunRequestId: s.RunRequestID,
		Status: runStatuses.Proto(s.Status), Substatus: runSubstatuses.Proto(s.Substatus), Message: s.Message,
		CompensationOutcome: compensationOutcomes.Proto(s.CompensationOutcome),
		CreatedAt:           eventpb.Timestamp(s.CreatedAt), StartedAt: eventpb.Timestamp(s.StartedAt),
		CompletedAt:     eventpb.Timestamp(s.CompletedAt),
		TotalDurationMs: uint64(max(s.TotalDuration.Milliseconds(), 0)), LastEventSeq: s.LastEventSeq,
		Error: eventpb.RunError(s.Error), Cancellation: eventpb.Cancellation(s.Cancellation),
		SubmittedBy: s.SubmittedBy, FailedSteps: uint32(s.FailedSteps()), TriggerSource: s.TriggerSource,
		Definition: definitionProto(s.Definition), Input: eventpb.JSONValue(s.Input),
		Artifacts: eventpb.Artifacts(s.Artifacts), Deadline: eventpb.Timestamp(s.Deadline),
		Result: eventpb.JSONValue(s.Result), RetainUntil: eventpb.Timestamp(s.RetainUntil),
		ParentRunId: s.ParentRunID, ParentStep: s.ParentStep, SearchAttributes: eventpb.SearchAttributes(s.SearchAttributes),
		Priority: uint32(max(s.Priority, 0)),
	}
	if c := s.Concurrency; c != nil {
		out.Concurrency = &weftv1.RunKeyConcurrency{Key: c.Key, Limit: uint32(max(c.Limit, 0)), Strategy: c.Strategy,
			InUse: uint32(max(c.InUse, 0)), Wait: c.Wait}
	}
	for i := range s.Steps {
		st := &s.Steps[i]
		step := &weftv1.Step{
			ActionId: st.ActionID, Status: stepStatuses.Proto(st.Status),
			LogicalAttemptId: uint32(max(st.LogicalAttempt, 0)), EngineAttemptId: uint32(max(st.EngineAttempt, 0)),
			ScheduledAt: eventpb.Timestamp(st.ScheduledAt), StartedAt: eventpb.Timestamp(st.StartedAt),
			CompletedAt: eventpb.Timestamp(st.CompletedAt), Output: eventpb.JSONValue(st.Output),
			Artifacts: eventpb.Artifacts(st.Artifacts), Error: eventpb.StepError(st.Error),
			CompletionToken: st.CompletionToken, CompensationStatus: compensationStatuses.Proto(st.CompStatus),
			CompensationError: eventpb.StepError(st.CompError), IdempotencyKey: actionIdempotencyKey(s.RunID, st.ActionID),
			NextAttemptAt: eventpb.Timestamp(st.NextAttemptAt), Reason: st.Reason,
			WaitingForSignal: st.WaitingSignal, ManualCompletion: eventpb.StepManual(st.Manual),
			WakeAt: eventpb.Timestamp(st.WakeAt), Iteration: uint32(max(st.Iteration, 0)), Input: eventpb.JSONValue(st.Input),
			ChildRunId: st.ChildRunID, FlowWait: s.FlowWaits[st.ActionID],
			ParentStep: st.Parent, ItemIndex: uint32(max(st.Index, 0)),
		}
		if f, ok := s.FanOuts()[st.ActionID]; ok {
			n := func(v int) uint32 { return uint32(max(v, 0)) }
			step.FanOut = &weftv1.FanOutProgress{Items: n(f.Items), MaxConcurrency: n(f.MaxConcurrency),
				Pending: n(f.Pending), InFlight: n(f.InFlight), Succeeded: n(f.Succeeded), Failed: n(f.Failed),
				Cancelled: n(f.Cancelled)}
		}
		for j := range st.Attempts {
			step.Attempts = append(step.Attempts, plainAttemptProto(&st.Attempts[j]))
		}
		out.Steps = append(out.Steps, step)
	}
	return out
}

func plainAttemptProto(a *runstate.Attempt) *weftv1.Attempt {
	return &weftv1.Attempt{
		LogicalAttemptId: uint32(max(a.LogicalAttempt, 0)), EngineAttemptId: uint32(max(a.EngineAttempt, 0)),
		Outcome: eventpb.AttemptOutcomes.Proto(a.Outcome), Error: eventpb.StepError(a.Error),
		StartedAt: eventpb.Timestamp(a.StartedAt), CompletedAt: eventpb.Timestamp(a.CompletedAt), WorkerId: a.WorkerID,
	}
}

func plainTaskProto(t *engine.Task) *weftv1.Task {
	out := &weftv1.Task{
		TaskToken: t.Token, TaskType: taskTypes.Proto(t.Kind), TaskId: t.TaskID, RunId: t.RunID,
		ActionId: t.ActionID, Activity: t.Activity, OperationId: t.OperationID,
		Input: eventpb.JSONValue(t.Input), RunInput: eventpb.JSONValue(t.RunInput), IdempotencyKey: t.IdempotencyKey,
		LogicalAttemptId: uint32(max(t.LogicalAttempt, 0)), EngineAttemptId: uint32(max(t.EngineAttempt, 0)),
		Deadline: eventpb.Timestamp(t.Deadline), HeartbeatTimeoutMs: uint32(max(t.HeartbeatTimeout.Milliseconds(), 0)),
		Secrets: secretsProto(t.Secrets), TenantId: t.TenantID, ReconciliationKey: t.ReconciliationKey, Traceparent: t.TraceParent,
		HeartbeatDetails: eventpb.JSONValue(t.HeartbeatDetails),
	}
	if t.ItemOf != "" {
		out.Item, out.Index = eventpb.JSONValue(t.Item), uint32(max(t.Index, 0))
		if out.Item == nil {
			out.Item = structpb.NewNullValue()
		}
	}
	for id, v := range t.UpstreamOutputs {
		if out.UpstreamOutputs == nil {
			out.UpstreamOutputs = map[string]*structpb.Value{}
		}
		if pv := eventpb.JSONValue(v); pv != nil {
			out.UpstreamOutputs[id] = pv
		} else {
			out.UpstreamOutputs[id] = structpb.NewNullValue()
		}
	}
	return out
}

// requireSameMessage fails unless got and want are the same message: equal,
// and the same bytes in binary (deterministic) and in the API's JSON.
func requireSameMessage(t *testing.T, want, got proto.Message, msgAndArgs ...any) {
	t.Helper()
	require.True(t, proto.Equal(want, got), msgAndArgs...)
	wb, err := proto.MarshalOptions{Deterministic: true}.Marshal(want)
	require.NoError(t, err)
	gb, err := proto.MarshalOptions{Deterministic: true}.Marshal(got)
	require.NoError(t, err)
	require.Equal(t, wb, gb, msgAndArgs...)
	wj, err := jsonMarshal.Marshal(want)
	require.NoError(t, err)
	gj, err := jsonMarshal.Marshal(got)
	require.NoError(t, err)
	require.JSONEq(t, string(wj), string(gj), msgAndArgs...)
}

// jsonSamples are the JSON values the random fill picks from: the empty
// object among them, and values that only look like it.
var jsonSamples = []json.RawMessage{nil, json.RawMessage(`{}`), json.RawMessage(`{ }`), json.RawMessage(`null`),
	json.RawMessage(`{"a":1}`), json.RawMessage(`[{}]`), json.RawMessage(`"{}"`), json.RawMessage(`{"":{}}`)}

// fillValues are the values of the types randomFill gives their own.
var fillValues = map[reflect.Type][]any{reflect.TypeFor[json.RawMessage](): func() (out []any) {
	for _, s := range jsonSamples {
		out = append(out, s)
	}
	return out
}()}

// randomFill sets v, recursively, to random values: every field of every
// struct, so that a field a conversion forgets shows.
func randomFill(r *rand.Rand, v reflect.Value) {
	fill.Filler{Rand: r, Strings: []string{"", "a", "step-1", "step-7", "é:x"}, MaxDepth: 6,
		Values: fillValues}.FillValue(v)
}

func randomSnapshot(r *rand.Rand) *runstate.Snapshot {
	s := new(runstate.Snapshot)
	randomFill(r, reflect.ValueOf(s).Elem())
	if r.IntN(3) == 0 {
		s.Steps = make([]runstate.StepState, 1+r.IntN(6))
		for i := range s.Steps {
			randomFill(r, reflect.ValueOf(&s.Steps[i]).Elem())
			s.Steps[i].ActionID = "a" + strconv.Itoa(i) + s.Steps[i].ActionID
		}
	}
	return s
}

// runProto's blocks — the steps', the attempts' and their pointers, the
// idempotency keys — and its shared definition answer each run as
// converting every message on its own does.
func TestRunProto_AnswersWhatConvertingEachMessageAloneAnswers(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(16, 1))
	for i := range 2000 {
		s := randomSnapshot(r)
		requireSameMessage(t, plainRunProto(s), runProto(s), "snapshot %d", i)
	}
	require.Nil(t, runProto(nil))
}

// A step's attempts are a slice of the run's block capped at its own: one
// step's attempts growing leaves the next step's alone.
func TestRunProto_GrowingOneStepsAttemptsLeavesTheNextStepsAlone(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	s := &runstate.Snapshot{RunID: "r", Steps: []runstate.StepState{
		{ActionID: "a", Attempts: []runstate.Attempt{{LogicalAttempt: 1, StartedAt: at}}},
		{ActionID: "b", Attempts: []runstate.Attempt{{LogicalAttempt: 2, StartedAt: at}, {LogicalAttempt: 3}}},
	}}
	run := runProto(s)
	run.Steps[0].Attempts = append(run.Steps[0].Attempts, &weftv1.Attempt{LogicalAttemptId: 99})
	run.Steps[0].IdempotencyKey += "x"
	requireSameMessage(t, plainRunProto(s).GetSteps()[1], run.GetSteps()[1])
	require.Equal(t, "r:a", plainRunProto(s).GetSteps()[0].GetIdempotencyKey())
}

// Every field of an attempt is converted into its box (eventpb.AttemptIn, as
// runProto and the events do) as converting it field by field does.
func TestAttemptIn_IsThePlainConversion(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(16, 2))
	for range 500 {
		var a runstate.Attempt
		randomFill(r, reflect.ValueOf(&a).Elem())
		var box attemptBox
		requireSameMessage(t, plainAttemptProto(&a), eventpb.AttemptIn(&a, &box.attempt, &box.at))
	}
}

// The empty object's one-allocation Value is the Value eventpb.JSONValue
// parses, on the wire and in JSON; every other value is eventpb's.
func TestJSONValue_IsEventpbJSONValue(t *testing.T) {
	t.Parallel()
	for _, raw := range append(jsonSamples, json.RawMessage(`{"a":{}}`), json.RawMessage(`[]`), json.RawMessage(` {}`)) {
		want, got := eventpb.JSONValue(raw), jsonValue(raw)
		if want == nil {
			require.Nil(t, got, "%q", raw)
			continue
		}
		requireSameMessage(t, want, got, "%q", raw)
	}
	a, b := jsonValue(json.RawMessage(`{}`)), jsonValue(json.RawMessage(`{}`))
	require.NotSame(t, a, b, "each answer its own message")
	a.GetStructValue().Fields = map[string]*structpb.Value{"x": structpb.NewNullValue()}
	require.Empty(t, b.GetStructValue().GetFields())
}

// tasksProto answers one task (a block with its slice) and several as
// converting each alone does.
func TestTasksProto_AnswersWhatConvertingEachTaskAloneAnswers(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(16, 3))
	for n := range 4 {
		for range 100 {
			tasks := make([]*engine.Task, n)
			for i := range tasks {
				tasks[i] = new(engine.Task)
				randomFill(r, reflect.ValueOf(tasks[i]).Elem())
			}
			got := tasksProto(tasks)
			require.Len(t, got, n)
			for i := range tasks {
				requireSameMessage(t, plainTaskProto(tasks[i]), got[i])
			}
		}
	}
}

// submittedDefinition is a definition as the engine prepares one: the
// actions every run of it shares.
func submittedDefinition(t *testing.T, planVersion string) definition.Definition {
	t.Helper()
	def := benchDefinition()
	def.PlanVersion = planVersion
	p, err := submitParamsOf(&weftv1.SubmitRunRequest{Definition: def}, caller{tenant: DefaultTenant})
	require.NoError(t, err)
	prepared, err := definition.Prepare(p.Definition)
	require.NoError(t, err)
	return prepared.Definition
}

// The runs of one definition share its message, built once; a definition
// is never answered another's message, whether it shares the actions
// (another plan version over them) or only equals them (its own array).
func TestSharedDefinitionProto_IsBuiltOncePerDefinitionAndNeverAnsweredAnothers(t *testing.T) {
	t.Parallel()
	c := newDefinitionCache(8)
	d := submittedDefinition(t, "1")
	first := c.get(d)
	requireSameMessage(t, definitionProto(d), first)
	require.Same(t, first, c.get(d), "the same definition's runs share the message")

	other := d
	other.PlanVersion = "2" // the same actions' array under other fields
	requireSameMessage(t, definitionProto(other), c.get(other))
	require.NotEqual(t, "2", first.GetPlanVersion())

	copied := d.Clone() // equal, in an array of its own
	requireSameMessage(t, definitionProto(copied), c.get(copied))

	// An entry whose key names an array its definition does not hold (as
	// if the array's memory had been reused) is not answered.
	changed := d.Clone()
	changed.Actions[0].Activity = "another.activity"
	c.entries[&changed.Actions[0]] = &definitionEntry{def: d, out: first}
	requireSameMessage(t, definitionProto(changed), c.get(changed))

	require.Nil(t, c.get(definition.Definition{}), "ListRuns leaves the definition out")
}

// The cache holds at most its bound.
func TestSharedDefinitionProto_HoldsAtMostItsBound(t *testing.T) {
	t.Parallel()
	c := newDefinitionCache(4)
	for i := range 20 {
		d := submittedDefinition(t, strconv.Itoa(i))
		requireSameMessage(t, definitionProto(d), c.get(d))
		require.LessOrEqual(t, len(c.entries), 4)
	}
}

// A shared definition's message is only read once built: answers that
// carry it, encoded at once in binary and in JSON by many goroutines (run
// with -race), and all the answers served through the handler in both
// codecs, leave it what a fresh conversion is.
func TestSharedDefinitionProto_ServingAnswersLeavesTheSharedMessageUnchanged(t *testing.T) {
	t.Parallel()
	d := submittedDefinition(t, "shared")
	shared := sharedDefinitionProto(d)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for range 50 {
				snap := &runstate.Snapshot{RunID: "run-" + strconv.Itoa(g), Definition: d}
				res := &weftv1.SubmitRunResponse{Run: runProto(snap)}
				if res.GetRun().GetDefinition() != shared {
					panic("the run's answer does not carry the shared definition")
				}
				if _, err := (protoCodec{}).Marshal(res); err != nil {
					panic(err)
				}
				if _, err := (jsonCodec{name: "json"}).Marshal(res); err != nil {
					panic(err)
				}
			}
		})
	}
	wg.Wait()

	def := benchDefinition()
	def.PlanVersion = "shared"
	snap := benchSnapshot(def)
	snap.Definition = d
	h := benchHandler(t, Config{Runs: cannedRuns{snap: snap}})
	for _, ct := range []string{"application/proto", "application/json"} {
		for range 20 {
			callSubmit(t, h, ct, &weftv1.SubmitRunRequest{Definition: def, Start: true, AwaitMs: 1000})
		}
	}
	requireSameMessage(t, definitionProto(d), shared)
	b, err := protojson.Marshal(shared)
	require.NoError(t, err)
	fresh, err := protojson.Marshal(definitionProto(d))
	require.NoError(t, err)
	require.JSONEq(t, string(fresh), string(b))
}

// callSubmit submits msg through h in the Connect protocol, encoded as
// contentType says, and requires it answered.
func callSubmit(t *testing.T, h http.Handler, contentType string, msg *weftv1.SubmitRunRequest) {
	t.Helper()
	var body []byte
	var err error
	if contentType == "application/json" {
		body, err = protojson.Marshal(msg)
	} else {
		body, err = proto.Marshal(msg)
	}
	require.NoError(t, err)
	req := httptest.NewRequest(http.MethodPost, weftv1connect.RunServiceSubmitRunProcedure, bytes.NewReader(body))
	req.Header.Set("Content-Type", contentType)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, req)
	require.Equal(t, http.StatusOK, rec.Code, rec.Body.String())
}
