package definition

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"math/rand/v2"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/testkit/fill"
)

// fresh prepares d without any cache, as a submission did before the cache:
// WithDefaults, Validate, json.Marshal, SHA-256.
func fresh(d Definition) (def Definition, canonical []byte, sha string, err error) {
	def = d.WithDefaults()
	if err := def.Validate(); err != nil {
		return Definition{}, nil, "", err
	}
	canonical, err = json.Marshal(def)
	if err != nil {
		return Definition{}, nil, "", err
	}
	sum := sha256.Sum256(canonical)
	return def, canonical, hex.EncodeToString(sum[:]), nil
}

// requirePreparedAsFresh checks that c's answer for d is byte for byte what
// preparing d afresh answers.
func requirePreparedAsFresh(t *testing.T, c *PreparedCache, d Definition, msg string) {
	t.Helper()
	def, canonical, sha, err := fresh(d)
	got, gotErr := c.Prepare(d)
	if err != nil {
		require.Error(t, gotErr, msg)
		require.Equal(t, err.Error(), gotErr.Error(), msg)
		return
	}
	require.NoError(t, gotErr, msg)
	require.Equal(t, string(canonical), string(got.JSON), msg)
	require.Equal(t, sha, got.PlanSHA256, msg)
	require.True(t, reflect.DeepEqual(def, got.Definition), msg)
}

// definitionValues are the values of the definition's own types: mostly
// values a definition may validly hold, so that most definitions prepare.
var definitionValues = map[reflect.Type][]any{
	reflect.TypeFor[json.RawMessage]():  {nil, json.RawMessage{}, json.RawMessage(`{}`), json.RawMessage(`{"a":1}`), json.RawMessage(`[1,"x"]`), json.RawMessage(`"s"`)},
	reflect.TypeFor[Duration]():         {Duration(0), Ms(1), Ms(250), Ms(1000), Ms(30000), Ms(90000)},
	reflect.TypeFor[BackoffStrategy]():  {"", BackoffConstant, BackoffLinear, BackoffExponential},
	reflect.TypeFor[OnFailure]():        {"", OnFailureAbort, OnFailureSkip, OnFailureCompensate, OnFailureHold},
	reflect.TypeFor[CompletionMode]():   {"", "", "", CompletionAutomated, CompletionManual},
	reflect.TypeFor[BackpressureMode](): {"", BackpressureReject, BackpressureQueue, BackpressureDelay},
	reflect.TypeFor[ErrorClass]():       {ErrorTimeout, ErrorTransient, ErrorValidation},
}

// randomValue fills v (settable) with a random value of its type, by
// reflection, so that a field added later is filled too.
func randomValue(r *rand.Rand, v reflect.Value) {
	fill.Filler{Rand: r, Strings: []string{"", "a", "b", "c", "q1", "op.x", "é"}, Ints: []int64{0, 1, 2, 3},
		Values: definitionValues, EmptySlices: true}.FillValue(v)
}

func pick(r *rand.Rand, s ...string) string { return s[r.IntN(len(s))] }

// randomDefinition answers a random definition, valid more often than not:
// actions with distinct ids and contiguous orders.
func randomDefinition(r *rand.Rand) Definition {
	var d Definition
	randomValue(r, reflect.ValueOf(&d).Elem())
	if r.IntN(4) != 0 {
		d.PlanID, d.PlanVersion, d.ResultActionID = "plan", "1", ""
		d.Actions = make([]Action, 1+r.IntN(4))
		for i := range d.Actions {
			randomValue(r, reflect.ValueOf(&d.Actions[i]).Elem())
			a := &d.Actions[i]
			a.ID, a.Order, a.DependsOn = string(rune('a'+i)), i+1, nil
			a.Queue = pick(r, "", "q1")
			a.HeartbeatTimeout = Ms(int64(r.IntN(2)) * 1000)
			if w := a.WaitForSignal; w != nil {
				w.SignalName, a.Completion = "sig", CompletionAutomated
			}
			if a.WaitForSignal == nil && a.Completion != CompletionManual {
				a.Activity = "act"
			} else {
				a.Activity = ""
			}
			validRetry(&a.Retry)
			if k := a.Compensation; k != nil {
				k.Operation, k.Queue = "undo", pick(r, "", "cq")
				validRetry(&k.Retry)
			}
			for j := range a.Secrets {
				a.Secrets[j] = SecretRef{Name: "s", Ref: pick(r, "r1", "r2")}
			}
			a.When, a.SleepUntil, a.Sleep = pick(r, "", "", "true", "input.x > 1", "inptu"), "", 0
			if a.Repeat != nil {
				a.Repeat.Until, a.Repeat.MaxIterations = pick(r, "true", "steps."+a.ID+".output.done"), 1+r.IntN(3)
			}
			if r.IntN(8) == 0 {
				a.Activity, a.WaitForSignal, a.Completion, a.Compensation, a.Repeat = "", nil, "", nil, nil
				a.Sleep, a.SleepUntil = Ms(int64(1+r.IntN(2))*1000), ""
			}
			if a.Activity == "" { // repeat needs an activity or sub-workflow step; no draw
				a.Repeat = nil
			}
			a.Workflow, a.ParentClose = nil, ""
			a.ForEach, a.MaxConcurrency = "", 0
			if a.Activity != "" && a.Repeat == nil && i == 1 && len(d.Actions)%2 == 0 { // a fan-out; no draw: the sequence stays
				a.ForEach, a.MaxConcurrency = []string{"[1, 2]", "input.items"}[len(d.Actions)%4/2], len(a.Secrets)%3
			}
			if a.Activity != "" && r.IntN(8) == 0 { // a sub-workflow step
				a.Workflow = &SubWorkflow{PlanID: "sub", PlanVersion: pick(r, "", "2"), Input: json.RawMessage(`{"i":1}`)}
				a.Activity, a.WaitForSignal, a.Completion, a.Compensation, a.Repeat = "", nil, CompletionAutomated, nil, nil
				a.ParentClose = ParentClose(pick(r, "", "cancel", "abandon"))
			}
		}
		d.Retention = Ms(int64(r.IntN(2)) * 90000)
		// Run concurrency and fairness, valid or absent; no draw: the sequence stays.
		d.Concurrency = []*RunConcurrency{nil, nil, {Key: "run.id", Limit: 2}, {Key: "input.c", Limit: 1, Strategy: "cancelNewest"}}[len(d.Actions)%4]
		d.Fairness = []*Fairness{nil, {Key: "input.tenant"}, nil, {Key: "run.id", Weight: "2"}}[len(d.Actions)%4]
		for i := range d.Actions {
			d.Actions[i].Fairness = nil
		}
		d.SearchAttributes = []map[string]string{nil, {"customer": "${{ input.x }}"}, {"channel": "web", "n": "${{ 2 }}"}}[len(d.Actions)%3] // no draw: the sequence stays
	}
	return d
}

// validRetry puts a retry policy's backoffs in order.
func validRetry(p *RetryPolicy) {
	if p.MaxBackoff != 0 && p.InitialBackoff > p.MaxBackoff {
		p.InitialBackoff, p.MaxBackoff = p.MaxBackoff, p.InitialBackoff
	}
}

// A prepared definition, first seen or served from the cache, is byte for
// byte what defaulting, validating, json.Marshal and SHA-256 answer afresh,
// over random definitions each submitted more than once, and an invalid one
// answers the same error.
func TestPreparedCache_AnswersExactlyWhatPreparingAfreshAnswers(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	c := NewPreparedCache(64)
	var defs []Definition
	valid := 0
	for i := range 2000 {
		if len(defs) > 0 && r.IntN(2) == 0 {
			d := defs[r.IntN(len(defs))]
			requirePreparedAsFresh(t, c, d, "again")
			continue
		}
		d := randomDefinition(r)
		if _, err := Prepare(d); err == nil {
			valid++
		}
		defs = append(defs, d)
		requirePreparedAsFresh(t, c, d, "first "+string(rune(i)))
	}
	require.Greater(t, valid, 200, "the generator makes valid definitions")
	require.LessOrEqual(t, c.Len(), 64, "the cache is bounded")
}

// mutations answers a setter for every field path of v that can be changed to
// a different value (by reflection: a field added later is covered).
func mutations(v reflect.Value, path string, out *[]string, set *[]func()) {
	switch v.Kind() {
	case reflect.Struct:
		for i := range v.NumField() {
			mutations(v.Field(i), path+"."+v.Type().Field(i).Name, out, set)
		}
	case reflect.Pointer:
		if v.IsNil() {
			*out = append(*out, path+" (set)")
			*set = append(*set, func() { v.Set(reflect.New(v.Type().Elem())) })
			return
		}
		*out = append(*out, path+" (nil)")
		*set = append(*set, func() { v.SetZero() })
		mutations(v.Elem(), path, out, set)
	case reflect.Slice:
		if v.IsNil() {
			*out = append(*out, path+" (empty)")
			*set = append(*set, func() { v.Set(reflect.MakeSlice(v.Type(), 0, 0)) })
		} else {
			*out = append(*out, path+" (nil)")
			*set = append(*set, func() { v.SetZero() })
		}
		if v.Type().Elem().Kind() == reflect.Uint8 && v.Len() > 0 { // raw JSON: one byte changed
			*out = append(*out, path+" (byte)")
			*set = append(*set, func() { v.Index(0).SetUint(v.Index(0).Uint() ^ ' ') })
			return
		}
		for i := range v.Len() {
			mutations(v.Index(i), path+"["+string(rune('0'+i))+"]", out, set)
		}
	case reflect.Map: // string to string (search attributes): nil or empty, a key added, each value changed
		if v.IsNil() {
			*out = append(*out, path+" (empty)")
			*set = append(*set, func() { v.Set(reflect.MakeMap(v.Type())) })
			return
		}
		*out = append(*out, path+" (nil)", path+" (key)")
		*set = append(*set, func() { v.SetZero() }, func() {
			m := reflect.MakeMap(v.Type())
			for _, k := range v.MapKeys() {
				m.SetMapIndex(k, v.MapIndex(k))
			}
			m.SetMapIndex(reflect.ValueOf("added"), reflect.ValueOf("x"))
			v.Set(m)
		})
		for _, k := range v.MapKeys() {
			*out = append(*out, path+"["+k.String()+"]")
			*set = append(*set, func() {
				m := reflect.MakeMap(v.Type())
				for _, k2 := range v.MapKeys() {
					m.SetMapIndex(k2, v.MapIndex(k2))
				}
				m.SetMapIndex(k, reflect.ValueOf(v.MapIndex(k).String()+"x"))
				v.Set(m)
			})
		}
	case reflect.String:
		*out = append(*out, path)
		*set = append(*set, func() { v.SetString(v.String() + "x") })
	case reflect.Bool:
		*out = append(*out, path)
		*set = append(*set, func() { v.SetBool(!v.Bool()) })
	case reflect.Int, reflect.Int64, reflect.Int32:
		*out = append(*out, path)
		*set = append(*set, func() { v.SetInt(v.Int() + 1) })
	case reflect.Float64:
		*out = append(*out, path)
		*set = append(*set, func() { v.SetFloat(v.Float() + 0.5) })
	default:
		panic("mutations: no mutation for " + v.Type().String())
	}
}

// Every field of a definition tells it apart in the cache: a definition
// that differs from a cached one in any one field — by reflection over every
// field, so one added later is covered — is never answered the cached one's
// preparation. A field the cache's hash or Equal left out fails here.
func TestPreparedCache_NeverAnswersOneDefinitionForAnother(t *testing.T) {
	base := func() Definition {
		return Definition{PlanID: "plan", PlanVersion: "1", DisplayName: "d", Timeout: Ms(1000), Retention: Ms(5000),
			Backpressure: BackpressureQueue, MaxConcurrentRuns: 2, ResultActionID: "b",
			Actions: []Action{
				{ID: "a", Order: 1, Activity: "act", Queue: "q", Input: json.RawMessage(`{"k":1}`),
					Retry: RetryPolicy{MaxAttempts: 2, Strategy: BackoffLinear, InitialBackoff: Ms(10), Multiplier: 1.5,
						MaxBackoff: Ms(100), RetryableErrors: []ErrorClass{ErrorTimeout}},
					Timeout: Ms(2000), HeartbeatTimeout: Ms(500), ScheduleToStartTimeout: Ms(700), ManualTimeout: Ms(900),
					OnFailure: OnFailureSkip, Completion: CompletionAutomated,
					Compensation: &CompensationHook{Operation: "undo", Input: json.RawMessage(`[1]`), Timeout: Ms(300),
						Retry: RetryPolicy{MaxAttempts: 1, RetryableErrors: []ErrorClass{}}, Queue: "cq"},
					Secrets: []SecretRef{{Name: "s", Ref: "r"}}},
				{ID: "b", Order: 2, DependsOn: []string{"a"}, WaitForSignal: &SignalWait{SignalName: "go", Timeout: Ms(400)}},
				{ID: "c", Order: 3, DependsOn: []string{"b"}, ParentClose: ParentCloseAbandon,
					Workflow: &SubWorkflow{PlanID: "sub", PlanVersion: "2", Input: json.RawMessage(`{"i":1}`)}},
				{ID: "d", Order: 4, DependsOn: []string{"c"},
					Workflow: &SubWorkflow{Definition: &Definition{PlanID: "inner", PlanVersion: "1", Actions: []Action{{ID: "x", Order: 1, Activity: "act"}}}}},
			}}
	}
	var paths []string
	var sets []func()
	probe := base()
	mutations(reflect.ValueOf(&probe).Elem(), "def", &paths, &sets)
	require.Greater(t, len(paths), 40)
	for i, path := range paths {
		c := NewPreparedCache(8)
		requirePreparedAsFresh(t, c, base(), "base")
		// the same mutation, replayed on a fresh copy of base
		var p2 []string
		var s2 []func()
		d := base()
		mutations(reflect.ValueOf(&d).Elem(), "def", &p2, &s2)
		require.Equal(t, path, p2[i])
		s2[i]()
		unchanged := base()
		require.False(t, Equal(&d, &unchanged), "%s: Equal tells the mutated definition apart", path)
		requirePreparedAsFresh(t, c, d, path)
	}
}

// A definition changed after it was prepared does not change what the cache
// holds: it keeps a copy of its own.
func TestPreparedCache_KeepsItsOwnCopyOfTheDefinition(t *testing.T) {
	c := NewPreparedCache(8)
	d := Definition{PlanID: "plan", PlanVersion: "1", Actions: []Action{{ID: "a", Order: 1, Activity: "act", DependsOn: []string{}, Input: json.RawMessage(`{"k":1}`)}}}
	first, err := c.Prepare(d)
	require.NoError(t, err)
	d.Actions[0].Input[5] = '2'
	d.Actions[0].Activity = "other"
	requirePreparedAsFresh(t, c, d, "changed in place")
	d.Actions[0].Input[5] = '1'
	d.Actions[0].Activity = "act"
	again, err := c.Prepare(d)
	require.NoError(t, err)
	require.Equal(t, string(first.JSON), string(again.JSON))
}

// benchDefinition is weftbench's workflow: five no-op steps in sequence.
func benchDefinition() Definition {
	d := Definition{PlanID: "bench", PlanVersion: "1"}
	for i := range 5 {
		id := "s" + string(rune('1'+i))
		d.Actions = append(d.Actions, Action{ID: id, Order: i + 1, Activity: "noop"})
	}
	return d
}

// go test -bench Prepare -benchmem ./engine/definition/: a submission's
// preparation of a definition seen before, against preparing it afresh.
func BenchmarkPrepare(b *testing.B) {
	d := benchDefinition()
	b.Run("fresh", func(b *testing.B) {
		for b.Loop() {
			if _, err := Prepare(d); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("cached", func(b *testing.B) {
		c := NewPreparedCache(8)
		for b.Loop() {
			if _, err := c.Prepare(d); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func TestPutBounded_NeverHoldsMoreThanMaxAndKeepsWhatItWasJustGiven(t *testing.T) {
	m := map[int]string{}
	for i := range 100 {
		PutBounded(m, i, "v", 8)
		if len(m) > 8 {
			t.Fatalf("after %d puts the map holds %d entries, more than 8", i+1, len(m))
		}
		if _, ok := m[i]; !ok {
			t.Fatalf("put %d is not held right after it was made", i)
		}
	}
	PutBounded(m, 99, "again", 8) // a key held already replaces its value and drops nothing
	if len(m) != 8 || m[99] != "again" {
		t.Fatalf("re-putting a held key: %d entries, value %q", len(m), m[99])
	}
}
