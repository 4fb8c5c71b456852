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

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
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

// fillRandom sets every field of v (a pointer) from the pools, recursively.
func fillRandom(r *rand.Rand, v reflect.Value, depth int) {
	switch v.Kind() {
	case reflect.Pointer:
		if depth > 3 || r.IntN(3) == 0 {
			v.Set(reflect.Zero(v.Type()))
			return
		}
		p := reflect.New(v.Type().Elem())
		fillRandom(r, p.Elem(), depth+1)
		v.Set(p)
	case reflect.Struct:
		if v.Type() == reflect.TypeFor[time.Time]() {
			if r.IntN(4) > 0 {
				v.Set(reflect.ValueOf(time.Date(2026, 11, 1, 12, 0, r.IntN(60), 0, time.UTC)))
			}
			return
		}
		for i := range v.NumField() {
			fillRandom(r, v.Field(i), depth)
		}
	case reflect.String:
		v.SetString(randomStrings[r.IntN(len(randomStrings))])
	case reflect.Int, reflect.Int64, reflect.Int32:
		v.SetInt(randomInts[r.IntN(len(randomInts))])
	case reflect.Uint64, reflect.Uint32:
		v.SetUint(uint64(max(randomInts[r.IntN(len(randomInts))], 0)))
	case reflect.Bool:
		v.SetBool(r.IntN(2) == 0)
	case reflect.Slice:
		if v.Type() == reflect.TypeFor[json.RawMessage]() {
			if r.IntN(2) == 0 {
				v.SetBytes([]byte(`{"k":[1,"two",null]}`))
			}
			return
		}
		n := r.IntN(3)
		s := reflect.MakeSlice(v.Type(), n, n)
		for i := range n {
			fillRandom(r, s.Index(i), depth+1)
		}
		v.Set(s)
	}
}

// randomEvent answers an event of a type the engine knows (or not), every
// field drawn from the pools: most are invalid somewhere, many are valid.
func randomEvent(r *rand.Rand) *runstate.Event {
	ev := validEvent()
	if r.IntN(4) > 0 { // keep some events nearly valid
		fillRandom(r, reflect.ValueOf(ev).Elem(), 0)
	} else {
		fillRandom(r, reflect.ValueOf(&ev.Data).Elem(), 0)
	}
	types := append(slices.Clone(engineEventTypes), "Unheard", "", "lower")
	ev.Type = types[r.IntN(len(types))]
	return ev
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
	_, err := compiledEventRules()
	require.NoError(t, err, "Check would fall back to protovalidate")
}

func TestCheck_AnswersWhatValidateAnswersViolationForViolation(t *testing.T) {
	r := rand.New(rand.NewPCG(16, 2026))
	valid, invalid := 0, 0
	for range 20000 {
		ev := randomEvent(r)
		want := violationsOf(t, Validate(ev))
		got := violationsOf(t, Check(ev))
		require.Equal(t, want, got, "event %+v", ev)
		if want == nil {
			valid++
		} else {
			invalid++
		}
	}
	require.Greater(t, valid, 100, "the generator must also make valid events")
	require.Greater(t, invalid, 100)
}

func FuzzCheck_AgreesWithValidate(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		ev := randomEvent(rand.New(rand.NewPCG(a, b)))
		require.Equal(t, violationsOf(t, Validate(ev)), violationsOf(t, Check(ev)))
	})
}

func TestCheck_ReadsTheEnvelopeWithoutConvertingIt(t *testing.T) {
	require.NotNil(t, directEnvelope(), "every ruled envelope field has a getter; otherwise Check converts the whole event")
}

// The envelope read on the runstate.Event answers what the converted event
// answers: the same violations in the same order.
func TestCheck_TheEnvelopeReadDirectlyAnswersWhatItsConversionAnswers(t *testing.T) {
	rules, err := compiledEventRules()
	require.NoError(t, err)
	direct := directEnvelope()
	r := rand.New(rand.NewPCG(17, 2026))
	for range 20000 {
		ev := randomEvent(r)
		if r.IntN(3) == 0 {
			ev.LogicalAttempt, ev.EngineAttempt = -r.IntN(3), -r.IntN(3)+r.IntN(3)
		}
		lean := *ev
		lean.Data.Output = nil
		var want, got []definition.Violation
		rules.check(Event(&lean).ProtoReflect(), nil, &want)
		direct.check(&lean, &got)
		require.Equal(t, want, got, "event %+v", ev)
	}
}
