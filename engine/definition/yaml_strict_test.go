package definition

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestLoadYAML_UnknownKeysAreRefusedWithTheirPathAndAGuess(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name, doc, field, hint string
	}{
		{"misspelt dependsOn", "steps: [{name: a}, {name: b, dependOn: [a]}]", "steps[1].dependOn", `did you mean "dependsOn"?`},
		{"wrong case of timeout", "steps: [{name: a, timeOut: 5m}]", "steps[0].timeOut", `did you mean "timeout"?`},
		{"spec key at the wrong place", "spec: {requiresAproval: true, steps: [{name: a}]}", "spec.requiresAproval", `did you mean "requiresApproval"?`},
		{"retry policy", "steps: [{name: a, retryPolicy: {maxRetry: 2}}]", "steps[0].retryPolicy.maxRetry", `did you mean "maxRetries"?`},
		{"compensation entry", "steps: [{name: a}]\ncompensation: [{step: a, opration: x.y}]", "compensation[0].opration", `did you mean "operation"?`},
		{"signal wait", "steps: [{name: a, waitForSignal: {nme: go}}]", "steps[0].waitForSignal.nme", `did you mean "name"?`},
		{"nothing close", "steps: [{name: a, colour: blue}]", "steps[0].colour", ""},
		{"metadata", "metadata: {nmae: p}\nsteps: [{name: a}]", "metadata.nmae", `did you mean "name"?`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := LoadYAML([]byte(tc.doc))
			var invalid *Error
			require.ErrorAs(t, err, &invalid)
			require.Len(t, invalid.Violations, 1, "%v", err)
			v := invalid.Violations[0]
			require.Equal(t, tc.field, v.Field)
			require.Equal(t, "yaml.unknown_key", v.Rule)
			if tc.hint == "" {
				require.NotContains(t, v.Message, "did you mean")
			} else {
				require.Contains(t, v.Message, tc.hint)
			}
		})
	}
}

func TestLoadYAML_InputIsFreeFormAndXKeysAreExtensions(t *testing.T) {
	t.Parallel()
	d, err := LoadYAML([]byte("apiVersion: weft/v1\nkind: Workflow\nx-defaults: &r {maxRetries: 1}\n" +
		"steps: [{name: a, input: {anyKey: 1, dependOn: 2}, retryPolicy: *r}]"))
	require.NoError(t, err)
	require.JSONEq(t, `{"anyKey":1,"dependOn":2}`, string(d.Actions[0].Input))
	require.Equal(t, 2, d.Actions[0].Retry.MaxAttempts)
}

func TestLoadYAML_EveryFieldOfTheAPIsDefinitionCanBeWritten(t *testing.T) {
	t.Parallel()
	d, err := LoadYAML([]byte(`
planId: approvals
spec:
  requiresApproval: true
  maxConcurrentRuns: 3
  backpressure: queue
  steps:
    - name: approve
      manual: true
      manualTimeout: 4h
    - name: pay
      dependsOn: [approve]
      secrets: [{name: API_KEY, ref: vault://payments/key}]
`))
	require.NoError(t, err)
	require.True(t, d.RequiresApproval)
	require.Equal(t, 3, d.MaxConcurrentRuns)
	require.Equal(t, BackpressureQueue, d.Backpressure)
	require.Equal(t, Duration(4*time.Hour), d.Actions[0].ManualTimeout)
	require.Equal(t, []SecretRef{{Name: "API_KEY", Ref: "vault://payments/key"}}, d.Actions[1].Secrets)
	require.NoError(t, d.WithDefaults().Validate())
}

func TestReadYAML_ReportsEveryLoaderAndValidatorErrorInOneAnswerByYAMLPath(t *testing.T) {
	t.Parallel()
	_, _, err := ReadYAML([]byte(`
spec:
  backpressure: sideways
  steps:
    - name: a
      timeOut: 5m
    - name: b
      dependsOn: [missing]
      retryPolicy: {maxAttempts: 99}
    - name: a
`))
	var invalid *Error
	require.ErrorAs(t, err, &invalid)
	got := map[string]string{}
	for _, v := range invalid.Violations {
		_, dup := got[v.Field]
		require.False(t, dup, "%s is reported once", v.Field)
		got[v.Field] = v.Rule
	}
	require.Equal(t, "yaml.backpressure", got["spec.backpressure"])
	require.Equal(t, "yaml.unknown_key", got["spec.steps[0].timeOut"])
	require.Equal(t, "yaml.max_attempts", got["spec.steps[1].retryPolicy.maxAttempts"])
	require.Contains(t, got, "spec.steps[1].dependsOn[0]", "the validator's finding, by its YAML path: %v", got)
	require.Contains(t, got, "spec.steps[2].name", "a duplicate id is named at the step's name: %v", got)
	for field := range got {
		require.False(t, strings.HasPrefix(field, "actions"), "no API path leaks: %s", field)
	}
}

func TestPathMap_PlacesTheAPIsFieldPathsInTheDocument(t *testing.T) {
	t.Parallel()
	_, paths, err := ReadYAML([]byte(`
metadata: {name: plan}
spec:
  timeout: 1h
  steps:
    - name: a
    - name: b
      dependsOn: [a]
  compensation:
    - step: b
      action: undo.b
`))
	require.NoError(t, err)
	for api, want := range map[string]string{
		"definition.plan_id":                                "metadata.name",
		"definition.timeout_ms":                             "spec.timeout",
		"definition.actions[1].depends_on[0]":               "spec.steps[1].dependsOn[0]",
		"actions[0].retry.max_attempts":                     "spec.steps[0].retryPolicy.maxAttempts",
		"definition.actions[1].compensation.operation":      "spec.compensation[0].action",
		"definition.actions[0].wait_for_signal.signal_name": "spec.steps[0].waitForSignal.name",
		"definition.requires_approval":                      "spec.requiresApproval",
		"run_request_id":                                    "run_request_id",
		"definition.actions":                                "spec.steps",
	} {
		require.Equal(t, want, paths.YAMLPath(api), api)
	}
}

func FuzzReadYAML(f *testing.F) {
	for _, seed := range []string{
		"steps: [{name: a}, {name: b, dependsOn: [a]}]",
		"spec: {steps: [{name: a, retryPolicy: {maxRetries: 2, backoff: linear}}], compensation: [{step: a, action: x}]}",
		"x-a: &a {name: s}\nsteps: [*a, {<<: *a, name: t, dependOn: s}]",
		"steps: [{name: a, secrets: [{name: K, ref: r}], manualTimeout: 1h, waitForSignal: {name: go}}]",
		"{\"steps\": [{\"name\": \"a\"}]}",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d, paths, err := ReadYAML(data)
		if err != nil {
			var invalid *Error
			require.ErrorAs(t, err, &invalid, "every refusal is an *Error with violations")
			require.NotEmpty(t, invalid.Violations)
			for _, v := range invalid.Violations {
				require.NotEmpty(t, v.Rule)
			}
			return
		}
		require.NoError(t, d.WithDefaults().Validate(), "what ReadYAML accepts validates")
		require.NotNil(t, paths)
		_, err = LoadYAML(data)
		require.NoError(t, err, "what ReadYAML accepts LoadYAML loads")
	})
}
