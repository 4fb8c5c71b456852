package definition

import (
	"encoding/json"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// loadFixture loads testdata/name, requiring success.
func loadFixture(t *testing.T, name string) Definition {
	t.Helper()
	data, err := os.ReadFile("testdata/" + name)
	require.NoError(t, err)
	d, err := LoadYAML(data)
	require.NoError(t, err)
	return d
}

func TestLoadYAML_Spec002CompensationExample(t *testing.T) {
	t.Parallel()
	d := loadFixture(t, "spec002_compensation.yaml")
	require.Equal(t, "onboarding", d.PlanID)
	require.Equal(t, DefaultPlanVersion, d.PlanVersion)
	require.Len(t, d.Actions, 4)
	ids := []string{"create-account", "provision-workspace", "setup-analytics", "send-welcome"}
	for i, a := range d.Actions {
		require.Equal(t, ids[i], a.ID)
		require.Equal(t, i+1, a.Order, "list position is the order")
		require.Equal(t, ids[i], a.Activity, "a step without agent runs the activity named after it")
	}
	require.Equal(t, []OnFailure{OnFailureCompensate, OnFailureCompensate, OnFailureCompensate, OnFailureSkip},
		[]OnFailure{d.Actions[0].OnFailure, d.Actions[1].OnFailure, d.Actions[2].OnFailure, d.Actions[3].OnFailure})
	require.Equal(t, &CompensationHook{Operation: "Deactivate account (soft delete)", Queue: "growth-optimizer"}, d.Actions[0].Compensation)
	require.Equal(t, &CompensationHook{Operation: "Delete workspace and release resources", Queue: "product-analyst"}, d.Actions[1].Compensation)
	require.Equal(t, &CompensationHook{Operation: "Remove analytics configuration", Queue: "data-pipeline"}, d.Actions[2].Compensation)
	require.Nil(t, d.Actions[3].Compensation, "send-welcome cannot be undone")

	// 002's actions are prose; an operation is a handler name, so the verbatim
	// example loads but does not validate, and the error says where.
	require.Equal(t, []fv{
		{"actions[0].compensation.operation", "compensation.operation_pattern"},
		{"actions[1].compensation.operation", "compensation.operation_pattern"},
		{"actions[2].compensation.operation", "compensation.operation_pattern"},
	}, violationsOf(t, d.WithDefaults().Validate()))
}

func TestLoadYAML_Spec002CompensationWithOperationKeysValidates(t *testing.T) {
	t.Parallel()
	d := loadFixture(t, "spec002_compensation_keys.yaml")
	require.Equal(t, "2", d.PlanVersion)
	require.Equal(t, Duration(30*time.Minute), d.Timeout)
	require.Equal(t, "account.deactivate", d.Actions[0].Compensation.Operation)
	require.JSONEq(t, `{"mode":"soft-delete"}`, string(d.Actions[0].Compensation.Input))
	full := d.WithDefaults()
	require.NoError(t, full.Validate())
	require.Equal(t, DefaultCompensationMaxAttempts, full.Actions[0].Compensation.Retry.MaxAttempts)
	require.Equal(t, "growth-optimizer", full.Actions[0].Compensation.Queue)
}

func TestLoadYAML_Spec002DiamondIsAValidDAG(t *testing.T) {
	t.Parallel()
	d := loadFixture(t, "spec002_diamond.yaml")
	require.Equal(t, "diamond", d.PlanID)
	deps := make([][]string, 0, len(d.Actions))
	for _, a := range d.Actions {
		deps = append(deps, a.DependsOn)
	}
	require.Equal(t, [][]string{nil, {"step-a"}, {"step-a"}, {"step-b", "step-c"}}, deps)
	require.NoError(t, d.WithDefaults().Validate())
}

func TestLoadYAML_EveryKey(t *testing.T) {
	t.Parallel()
	d := loadFixture(t, "full.yaml")
	want := Definition{
		PlanID: "payments", PlanVersion: "3.1.0", DisplayName: "Payment capture", DAG: true, ResultActionID: "capture",
		Timeout: Duration(90 * time.Minute), Retention: Duration(90 * 24 * time.Hour),
		Actions: []Action{
			{
				ID: "reserve", Order: 1, Activity: "inventory.reserve", Queue: "inventory",
				Timeout: Ms(300000), HeartbeatTimeout: Ms(30000), ScheduleToStartTimeout: Ms(120000), OnFailure: OnFailureAbort,
				Retry: RetryPolicy{MaxAttempts: 5, Strategy: BackoffLinear, InitialBackoff: Ms(500), MaxBackoff: Ms(60000),
					Multiplier: 1.5, RetryableErrors: []ErrorClass{ErrorTimeout, ErrorRateLimit, ErrorAgent}},
				Compensation: &CompensationHook{Operation: "inventory.release", Queue: "inventory-comp", Timeout: Ms(120000),
					Retry: RetryPolicy{MaxAttempts: 2, InitialBackoff: Ms(2000)}},
			},
			{ID: "approve", Order: 2, DependsOn: []string{"reserve"}, OnFailure: OnFailureHold,
				WaitForSignal: &SignalWait{SignalName: "approval", Timeout: Duration(24 * time.Hour)}},
			{ID: "review", Order: 3, DependsOn: []string{"approve"}, Completion: CompletionManual},
			{ID: "capture", Order: 4, Activity: "payments.capture", DependsOn: []string{"review"},
				Retry: RetryPolicy{MaxAttempts: 5, Strategy: BackoffConstant}},
		},
	}
	require.JSONEq(t, `{"sku":"ABC-1","count":2,"price":9.5,"gift":false,"note":null,"at":"2026-01-02","tags":["a","b"]}`,
		string(d.Actions[0].Input))
	require.JSONEq(t, `{"reason":"rollback"}`, string(d.Actions[0].Compensation.Input))
	d.Actions[0].Input, d.Actions[0].Compensation.Input = nil, nil
	require.Equal(t, want, d)
	require.NoError(t, d.WithDefaults().Validate())
}

func TestLoadYAML_MaxRetriesMeansMaxAttemptsPlusOne(t *testing.T) {
	t.Parallel()
	for n := 0; n <= MaxRetryAttempts-1; n++ {
		d, err := LoadYAML(fmt.Appendf(nil, "steps: [{name: a, retryPolicy: {maxRetries: %d}}]", n))
		require.NoError(t, err)
		require.Equal(t, n+1, d.Actions[0].Retry.MaxAttempts, "maxRetries %d", n)
	}
	d, err := LoadYAML([]byte("steps: [{name: a, retryPolicy: {backoff: linear}}]"))
	require.NoError(t, err)
	require.Zero(t, d.Actions[0].Retry.MaxAttempts, "no maxRetries leaves max_attempts unset")
}

func TestLoadYAML_PlanIdentity(t *testing.T) {
	t.Parallel()
	cases := []struct {
		yaml, id, version string
	}{
		{"planId: p\nname: n\nmetadata: {name: m}", "p", "1"},
		{"name: n\nmetadata: {name: m, version: 4}", "m", "4"},
		{"name: n\nversion: 2", "n", "2"},
		{"name: n\nplanVersion: 2.0.1\nversion: 9", "n", "2.0.1"},
	}
	for _, tc := range cases {
		d, err := LoadYAML([]byte(tc.yaml))
		require.NoError(t, err, tc.yaml)
		require.Equal(t, tc.id, d.PlanID, tc.yaml)
		require.Equal(t, tc.version, d.PlanVersion, tc.yaml)
	}
}

func TestLoadYAML_SpecWinsOverTopLevel(t *testing.T) {
	t.Parallel()
	d, err := LoadYAML([]byte(`
kind: Workflow
apiVersion: ioa/v9
steps: [{name: top}]
spec:
  steps: [{name: inner}]
`))
	require.NoError(t, err)
	require.Len(t, d.Actions, 1)
	require.Equal(t, "inner", d.Actions[0].ID)
}

func TestLoadYAML_AcceptsJSONSyntax(t *testing.T) {
	t.Parallel()
	d, err := LoadYAML([]byte(`{"planId":"j","steps":[{"name":"a","timeout":"1s","input":{"n":[1,2]}}]}`))
	require.NoError(t, err)
	require.Equal(t, Ms(1000), d.Actions[0].Timeout)
	require.JSONEq(t, `{"n":[1,2]}`, string(d.Actions[0].Input))
}

func TestLoadYAML_InputMergesAndAliases(t *testing.T) {
	t.Parallel()
	d, err := LoadYAML([]byte(`
base: &base {region: eu, size: 1}
steps:
  - name: a
    input: {<<: *base, size: 2, list: [*base]}
`))
	require.NoError(t, err)
	require.JSONEq(t, `{"region":"eu","size":2,"list":[{"region":"eu","size":1}]}`, string(d.Actions[0].Input))
}

func TestLoadYAML_AliasBombIsRefused(t *testing.T) {
	t.Parallel()
	var b strings.Builder
	b.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i <= 9; i++ {
		fmt.Fprintf(&b, "a%d: &a%d [*a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d, *a%d]\n", i, i,
			i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1, i-1)
	}
	b.WriteString("steps: [{name: s, input: *a9}]\n")
	_, err := LoadYAML([]byte(b.String()))
	require.Equal(t, []fv{{"steps[0].input", "yaml.input"}}, violationsOf(t, err))
}

func TestLoadYAML_BadInputsNameTheYAMLPath(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, yaml string
		want       []fv
	}{
		{"bad duration", "steps: [{name: a}, {name: b}, {name: c, timeout: 5 minutes}]",
			[]fv{{"steps[2].timeout", "yaml.duration"}}},
		{"duration without unit", "steps: [{name: a, timeout: 300}]", []fv{{"steps[0].timeout", "yaml.duration"}}},
		{"negative duration", "steps: [{name: a, retryPolicy: {initialDelay: -1s}}]", []fv{{"steps[0].retryPolicy.initialDelay", "yaml.duration"}}},
		{"bad workflow timeout", "spec: {timeout: soon, steps: [{name: a}]}", []fv{{"spec.timeout", "yaml.duration"}}},
		{"unknown onFailure", "spec: {steps: [{name: a, onFailure: retry}]}", []fv{{"spec.steps[0].onFailure", "yaml.on_failure"}}},
		{"unknown backoff", "steps: [{name: a, retryPolicy: {backoff: fibonacci}}]", []fv{{"steps[0].retryPolicy.backoff", "yaml.backoff"}}},
		{"maxRetries out of range", "steps: [{name: a, retryPolicy: {maxRetries: 10}}]", []fv{{"steps[0].retryPolicy.maxRetries", "yaml.max_retries"}}},
		{"maxRetries not an integer", "steps: [{name: a, retryPolicy: {maxRetries: many}}]", []fv{{"steps[0].retryPolicy.maxRetries", "yaml.integer"}}},
		{"maxAttempts out of range", "steps: [{name: a, retryPolicy: {maxAttempts: 0}}]", []fv{{"steps[0].retryPolicy.maxAttempts", "yaml.max_attempts"}}},
		{"maxRetries and maxAttempts", "steps: [{name: a, retryPolicy: {maxRetries: 1, maxAttempts: 2}}]", []fv{{"steps[0].retryPolicy", "yaml.conflict"}}},
		{"multiplier not a number", "steps: [{name: a, retryPolicy: {multiplier: .nan}}]", []fv{{"steps[0].retryPolicy.multiplier", "yaml.number"}}},
		{"unknown error class", "steps: [{name: a, retryPolicy: {retryableErrors: [timeout, flaky]}}]", []fv{{"steps[0].retryPolicy.retryableErrors[1]", "yaml.error_class"}}},
		{"manual not a boolean", "steps: [{name: a, manual: sometimes}]", []fv{{"steps[0].manual", "yaml.bool"}}},
		{"compensation names an unknown step", "steps: [{name: a}]\ncompensation: [{step: a, action: x}, {step: b, action: y}]",
			[]fv{{"compensation[1].step", "yaml.compensation_step"}}},
		{"compensation without step", "steps: [{name: a}]\ncompensation: [{action: x}]", []fv{{"compensation[0].step", "yaml.compensation_step"}}},
		{"two compensations for one step", "steps: [{name: a}]\ncompensation: [{step: a, action: x}, {step: a, action: y}]",
			[]fv{{"compensation[1].step", "yaml.compensation_duplicate"}}},
		{"input NaN", "steps: [{name: a, input: {x: .nan}}]", []fv{{"steps[0].input", "yaml.input"}}},
		{"input with a non-string key", "steps: [{name: a, input: {[1, 2]: x}}]", []fv{{"steps[0].input", "yaml.input"}}},
		{"step not a mapping", "steps: [a]", []fv{{"steps[0]", "yaml.type"}}},
		{"steps not a list", "steps: {a: 1}", []fv{{"steps", "yaml.type"}}},
		{"dependsOn not a list", "steps: [{name: a, dependsOn: {x: 1}}]", []fv{{"steps[0].dependsOn", "yaml.type"}}},
		{"name not a string", "steps: [{name: [a]}]", []fv{{"steps[0].name", "yaml.type"}}},
		{"document not a mapping", "- a\n- b", []fv{{"", "yaml.type"}}},
		{"empty document", "", []fv{{"", "yaml.type"}}},
		{"syntax error", "steps: [{name: a\n", []fv{{"", "yaml.syntax"}}},
		{"every problem at once", "steps: [{name: a, timeout: x, onFailure: y}]\ncompensation: [{step: z}]", []fv{
			{"steps[0].onFailure", "yaml.on_failure"},
			{"steps[0].timeout", "yaml.duration"},
			{"compensation[0].step", "yaml.compensation_step"},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d, err := LoadYAML([]byte(tc.yaml))
			require.Equal(t, tc.want, violationsOf(t, err))
			require.Zero(t, d, "no partial definition on error")
		})
	}
}

func TestLoadYAML_ErrorsNeverCarryAPayload(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		"steps: [{name: a, timeout: x, input: {password: s3cr3t}}]",
		"steps: [{name: a, input: {password: \"s3cr3t}]",
		"steps: [{name: a, input: {password: 's3cr3t', n: .inf}}]",
		"steps: [{name: a, input: &x {password: s3cr3t, self: *y}}]",
	} {
		_, err := LoadYAML([]byte(doc))
		require.Error(t, err, doc)
		require.NotContains(t, err.Error(), "s3cr3t", doc)
	}
}

func TestLoadYAML_ReturnsTheDefinitionBeforeDefaults(t *testing.T) {
	t.Parallel()
	d, err := LoadYAML([]byte("planId: p\nsteps: [{name: a}]"))
	require.NoError(t, err)
	require.Equal(t, Action{ID: "a", Order: 1, Activity: "a"}, d.Actions[0])
	raw, err := json.Marshal(d.WithDefaults().Actions[0].Retry)
	require.NoError(t, err)
	require.JSONEq(t, `{"max_attempts":3,"strategy":"exponential","initial_backoff_ms":1000,"backoff_multiplier":2,"max_backoff_ms":30000}`, string(raw))
}

func TestLoadYAML_SyntaxErrorKeepsTheLineAndProblem(t *testing.T) {
	t.Parallel()
	_, err := LoadYAML([]byte("planId: p\nsteps: [{name: a\n"))
	var e *Error
	require.ErrorAs(t, err, &e)
	require.Regexp(t, `^YAML syntax error: line \d+: did not find expected ',' or '}'$`, e.Violations[0].Message)
}
