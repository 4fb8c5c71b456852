package eventpb

import (
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/protorules"
	"github.com/weft-dev/weft/internal/testkit/fill"
)

// randomStrings are the strings a random event is made of: each rule's
// edges (empty, one character, the longest allowed and one more, hex
// and UUID shapes) and the engine's enum values.
var randomStrings = []string{
	"", "x", "RUN", "a", "Unheard", "lower", "Run1", "run-1", "1",
	"0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", "0195B3C2-7C1E-7E3A-9D41-2F1A6B8C9D0E", "0195b3c2x7c1e-7e3a-9d41-2f1a6b8c9d0e",
	strings.Repeat("a", 64), strings.Repeat("A", 64), strings.Repeat("a", 63), strings.Repeat("é", 64), strings.Repeat("é", 65),
	strings.Repeat("r", 128), strings.Repeat("r", 129), strings.Repeat("w", 512), strings.Repeat("w", 513),
	string(runstate.RunRunning), string(runstate.RunPending), string(runstate.StepSucceeded), string(runstate.StepRunning),
	string(runstate.StepFailed), string(runstate.StepScheduled), "NOT_A_STATUS",
	string(definition.ErrorTransient), string(runstate.SignalCancel), string(runstate.SignalManual),
	string(runstate.CompensationPartial), string(runstate.AttemptSucceeded), string(runstate.ManualSucceeded),
	string(runstate.VerifyIndeterminate),
}

var randomInts = []int64{0, 1, 2, 3, 999, 1000, 1001, -1}

// randomTimes are the times a random event holds: none, or a second of one minute.
var randomTimes = func() []any {
	out := []any{time.Time{}}
	for s := range 60 {
		out = append(out, time.Date(2026, 11, 1, 12, 0, s, 0, time.UTC))
	}
	return out
}()

// filler draws every field of an event from the pools.
func filler(r *rand.Rand) fill.Filler {
	return fill.Filler{Rand: r, Strings: randomStrings, Ints: randomInts, MaxDepth: 3,
		Values: map[reflect.Type][]any{reflect.TypeFor[time.Time](): randomTimes}}
}

// fillRandom sets every field of v from the pools, recursively.
func fillRandom(r *rand.Rand, v reflect.Value) { filler(r).FillValue(v) }

// randomEvent answers an event of a type the engine knows (or not): a valid
// event of its type with one field drawn from the pools, or one whose every
// field (or every payload field) is drawn: most are invalid somewhere, many
// are valid.
func randomEvent(r *rand.Rand) *runstate.Event {
	types := append(slices.Clone(engineEventTypes), "Unheard", "", "lower")
	typ := types[r.IntN(len(types))]
	ev := validEvent()
	switch r.IntN(3) {
	case 0: // valid but for a few fields
		ev.Type, ev.Data = typ, validData(typ)
		mutateSome(r, reflect.ValueOf(ev).Elem())
		return ev
	case 1:
		fillRandom(r, reflect.ValueOf(ev).Elem())
	default:
		fillRandom(r, reflect.ValueOf(&ev.Data).Elem())
	}
	ev.Type = typ
	return ev
}

// mutateSome draws each field of v (a struct, a pointer, a slice) anew
// with a small probability, or else each field it holds.
func mutateSome(r *rand.Rand, v reflect.Value) {
	if r.IntN(25) == 0 {
		fillRandom(r, v)
		return
	}
	switch {
	case v.Kind() == reflect.Struct && v.Type() != reflect.TypeFor[time.Time]():
		for i := range v.NumField() {
			mutateSome(r, v.Field(i))
		}
	case v.Kind() == reflect.Pointer && !v.IsNil():
		mutateSome(r, v.Elem())
	case v.Kind() == reflect.Slice && v.Type() != reflect.TypeFor[json.RawMessage]():
		for i := range v.Len() {
			mutateSome(r, v.Index(i))
		}
	}
}

// validData answers payload data that passes the rules of typ's payload.
func validData(typ string) runstate.EventData {
	at := time.Date(2026, 11, 1, 12, 0, 0, 0, time.UTC)
	d := runstate.EventData{Status: string(runstate.StepSucceeded), StartedAt: at, CompletedAt: at,
		PlanSHA256: strings.Repeat("a", 64), PlanID: "plan", Context: &runstate.RunContext{TenantID: "t1"}, TaskID: "task-1",
		Error: &runstate.StepError{Class: definition.ErrorTransient}, Attempt: &runstate.Attempt{}, NewLogicalAttempt: 2,
		CompensationOutcome: runstate.CompensationPartial,
		Artifacts:           []runstate.ArtifactRef{{URI: "s3://b/k", SHA256: strings.Repeat("b", 64)}}}
	if strings.HasPrefix(typ, "Run") {
		d.Status = string(runstate.RunRunning)
	}
	return d
}

func violationsOf(t *testing.T, err error) []definition.Violation {
	t.Helper()
	if err == nil {
		return nil
	}
	var e *SchemaError
	require.ErrorAs(t, err, &e)
	out := slices.Clone(e.Violations)
	slices.SortFunc(out, func(a, b definition.Violation) int {
		return strings.Compare(a.Field+"\x00"+a.Rule+"\x00"+a.Message, b.Field+"\x00"+b.Rule+"\x00"+b.Message)
	})
	return out
}

func TestCheck_CompilesEveryRuleOfTheEventProto(t *testing.T) {
	_, err := protorules.Compile((&weftv1.Event{}).ProtoReflect().Descriptor())
	require.NoError(t, err, "Check would be protovalidate")
	require.NotNil(t, eventChecks())
}

// Every ruled field of the envelope and of each payload has a reader: no
// event is converted to be checked.
func TestCheck_ReadsEveryRuledFieldOnTheEventWithoutConvertingIt(t *testing.T) {
	c := eventChecks()
	require.NotNil(t, c.envelope, "a ruled envelope field has no reader: every event is converted")
	for _, typ := range engineEventTypes {
		p, ok := c.payloads[typ]
		require.True(t, ok, "%s has no payload", typ)
		require.NotNil(t, p, "a ruled field of %s's payload has no reader: the event is converted", typ)
	}
}

// A valid event is checked without an allocation.
func TestCheck_PassesAValidEventWithoutAllocating(t *testing.T) {
	ev := benchEvent()
	ev.Data.Artifacts = []runstate.ArtifactRef{{URI: "s3://b/k", Kind: "log", SHA256: strings.Repeat("a", 64)}}
	require.NoError(t, Check(ev))
	require.Zero(t, testing.AllocsPerRun(100, func() { _ = Check(ev) }))
}

// agreePasses fails t unless c passes ev exactly when Validate finds no
// violation in it; it answers whether ev is valid.
func agreePasses(t testing.TB, c *eventCheck, ev *runstate.Event) bool {
	t.Helper()
	err := Validate(ev)
	if err != nil {
		var e *SchemaError
		require.ErrorAs(t, err, &e, "protovalidate could not evaluate a rule")
	}
	require.Equal(t, err == nil, c.passes(ev), "event %+v: Validate answers %v", ev, err)
	return err == nil
}

// The rules read on the event pass exactly the events protovalidate passes
// on their conversion, for every event type, valid and invalid: a refused
// event goes to Validate, so this is what makes Check Validate.
func TestCheck_PassesExactlyTheEventsValidatePasses(t *testing.T) {
	c := eventChecks()
	r := rand.New(rand.NewPCG(16, 2026))
	valid, invalid := map[string]int{}, map[string]int{}
	for range 30000 {
		ev := randomEvent(r)
		if agreePasses(t, c, ev) {
			valid[ev.Type]++
		} else {
			invalid[ev.Type]++
		}
	}
	for _, typ := range engineEventTypes {
		require.Positive(t, valid[typ], "%s: the generator must also make valid events", typ)
		require.Positive(t, invalid[typ], "%s: the generator must also break the rules", typ)
	}
}

// Each reader reads its field as the conversion sets it — value, presence,
// a list's length — on random events of every type, whether or not the
// rules pass them.
func TestCheck_ReadersReadEachRuledFieldAsTheConversionSetsIt(t *testing.T) {
	c := eventChecks()
	r := rand.New(rand.NewPCG(19, 2026))
	for range 20000 {
		ev := randomEvent(r)
		p, ok := c.payloads[ev.Type]
		if !ok {
			continue
		}
		m := Event(ev).ProtoReflect()
		agreeReads(t, c.envelope, ev, 0, m)
		agreeReads(t, p, ev, 0, m.Get(m.WhichOneof(m.Descriptor().Oneofs().ByName("payload"))).Message())
	}
}

func agreeReads(t *testing.T, b *boundMessage, ev *runstate.Event, item int, m protoreflect.Message) {
	t.Helper()
	for _, f := range b.fields {
		fd := f.rules.Descriptor()
		if f.read.len != nil {
			l := m.Get(fd).List()
			require.Equal(t, l.Len(), f.read.len(ev), "%s", fd.FullName())
			for i := range l.Len() {
				if f.nested != nil {
					agreeReads(t, f.nested, ev, i, l.Get(i).Message())
				}
			}
			continue
		}
		v, set := f.read.value(ev, item)
		require.Equal(t, m.Has(fd), set, "%s is set", fd.FullName())
		if fd.Message() == nil {
			require.True(t, v.Equal(m.Get(fd)), "%s: read %v, converted %v", fd.FullName(), v, m.Get(fd))
		}
		if f.nested != nil && set {
			agreeReads(t, f.nested, ev, item, m.Get(fd).Message())
		}
	}
}

// An event type whose payload has a ruled field without a reader is
// converted and checked by the compiled rules: it still passes exactly the
// events protovalidate passes.
func TestCheck_ConvertsAnEventWhoseRuledFieldHasNoReader(t *testing.T) {
	md := (&weftv1.Event{}).ProtoReflect().Descriptor()
	rules, err := protorules.Compile(md)
	require.NoError(t, err)
	for _, name := range []protoreflect.FullName{"weft.v1.StepCompleted.completed_at", "weft.v1.ArtifactRef.uri", "weft.v1.Event.run_id"} {
		t.Run(string(name), func(t *testing.T) {
			saved := fieldReaders[name]
			delete(fieldReaders, name)
			c := bindEvent(md, rules)
			fieldReaders[name] = saved
			if name == "weft.v1.Event.run_id" {
				require.Nil(t, c.envelope)
			} else {
				require.Nil(t, c.payloads[runstate.EvStepCompleted])
			}
			r := rand.New(rand.NewPCG(18, 2026))
			for range 5000 {
				agreePasses(t, c, randomEvent(r))
			}
		})
	}
}

func TestCheck_AnswersWhatValidateAnswersViolationForViolation(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2026))
	for range 5000 {
		ev := randomEvent(r)
		require.Equal(t, violationsOf(t, Validate(ev)), violationsOf(t, Check(ev)), "event %+v", ev)
	}
}

func FuzzCheck_PassesExactlyTheEventsValidatePasses(f *testing.F) {
	c := eventChecks()
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		agreePasses(t, c, randomEvent(rand.New(rand.NewPCG(a, b))))
	})
}
