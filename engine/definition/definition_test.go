package definition

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// validDefinition is a sequential definition with one action of each kind:
// an activity with a compensation hook and input, an activity with secrets,
// a wait-for-signal action and a manual action without an activity.
func validDefinition() Definition {
	return Definition{
		PlanID:      "onboarding",
		PlanVersion: "1",
		Actions: []Action{
			{ID: "a", Order: 1, Activity: "create-account", Compensation: &CompensationHook{Operation: "account.delete"}},
			{ID: "b", Order: 2, Activity: "charge", Input: json.RawMessage(`{"amount":5}`),
				Secrets: []SecretRef{{Name: "api", Ref: "vault://kv/payments#api_key"}}},
			{ID: "c", Order: 3, WaitForSignal: &SignalWait{SignalName: "approve"}},
			{ID: "d", Order: 4, Completion: CompletionManual},
		},
	}
}

// fv is a field path and rule id, what the tests assert of a violation.
type fv struct{ field, rule string }

// violationsOf answers err's violations as (field, rule) pairs, requiring an
// *Error.
func violationsOf(t *testing.T, err error) []fv {
	t.Helper()
	var e *Error
	require.True(t, errors.As(err, &e), "want *Error, got %v", err)
	require.NotEmpty(t, e.Violations)
	out := make([]fv, 0, len(e.Violations))
	for _, v := range e.Violations {
		require.NotEmpty(t, v.Rule)
		require.NotEmpty(t, v.Message)
		out = append(out, fv{v.Field, v.Rule})
	}
	return out
}

func TestValidate_ValidDefinitionPasses(t *testing.T) {
	t.Parallel()
	d := validDefinition()
	require.NoError(t, d.Validate())
	require.NoError(t, d.WithDefaults().Validate())
}

func TestValidate_Rules(t *testing.T) {
	t.Parallel()
	long := func(n int) string { return strings.Repeat("a", n) }
	day := Duration(24 * time.Hour)
	cases := []struct {
		name   string
		mutate func(d *Definition)
		want   []fv
	}{
		{"plan.id_required", func(d *Definition) { d.PlanID = "" }, []fv{{"plan_id", "plan.id_required"}}},
		{"plan.id_max_len", func(d *Definition) { d.PlanID = long(129) }, []fv{{"plan_id", "plan.id_max_len"}}},
		{"plan.id_pattern", func(d *Definition) { d.PlanID = "-x" }, []fv{{"plan_id", "plan.id_pattern"}}},
		{"plan.version_required", func(d *Definition) { d.PlanVersion = "" }, []fv{{"plan_version", "plan.version_required"}}},
		{"plan.version_max_len", func(d *Definition) { d.PlanVersion = long(65) }, []fv{{"plan_version", "plan.version_max_len"}}},
		{"plan.version_pattern", func(d *Definition) { d.PlanVersion = "1 0" }, []fv{{"plan_version", "plan.version_pattern"}}},
		{"plan.display_name_max_len", func(d *Definition) { d.DisplayName = strings.Repeat("é", 257) }, []fv{{"display_name", "plan.display_name_max_len"}}},
		{"plan.display_name_utf8", func(d *Definition) { d.DisplayName = "\xff" }, []fv{{"display_name", "plan.display_name_utf8"}}},
		{"plan.result_action_exists", func(d *Definition) { d.ResultActionID = "nope" }, []fv{{"result_action_id", "plan.result_action_exists"}}},
		{"plan.timeout_range above 30 days", func(d *Definition) { d.Timeout = 31 * day }, []fv{{"timeout_ms", "plan.timeout_range"}}},
		{"plan.timeout_range below 1 ms", func(d *Definition) { d.Timeout = Duration(time.Microsecond) }, []fv{{"timeout_ms", "plan.timeout_range"}}},
		{"plan.retention_range below 1 s", func(d *Definition) { d.Retention = Duration(time.Millisecond) }, []fv{{"retention_ms", "plan.retention_range"}}},
		{"plan.retention_range negative", func(d *Definition) { d.Retention = -day }, []fv{{"retention_ms", "plan.retention_range"}}},
		{"plan.retention_range above 10 years", func(d *Definition) { d.Retention = MaxRetention + day }, []fv{{"retention_ms", "plan.retention_range"}}},
		{"plan.backpressure_known", func(d *Definition) { d.Backpressure = "sometimes" }, []fv{{"backpressure", "plan.backpressure_known"}}},
		{"plan.max_concurrent_runs_range", func(d *Definition) { d.MaxConcurrentRuns = -1 }, []fv{{"max_concurrent_runs", "plan.max_concurrent_runs_range"}}},
		{"actions.min_items", func(d *Definition) { d.Actions = nil }, []fv{{"actions", "actions.min_items"}}},
		{"actions.max_items", func(d *Definition) { d.Actions = sequential(MaxActions + 1) }, []fv{{"actions", "actions.max_items"}}},
		{"action.id_required", func(d *Definition) { d.Actions[1].ID = "" }, []fv{{"actions[1].id", "action.id_required"}}},
		{"action.id_max_len", func(d *Definition) { d.Actions[1].ID = long(129) }, []fv{{"actions[1].id", "action.id_max_len"}}},
		{"action.id_pattern", func(d *Definition) { d.Actions[1].ID = "b c" }, []fv{{"actions[1].id", "action.id_pattern"}}},
		{"actions.id_unique", func(d *Definition) { d.Actions[2].ID = "a" }, []fv{{"actions[2].id", "actions.id_unique"}}},
		{"actions.order_contiguous gap", func(d *Definition) { d.Actions[2].Order = 5 }, []fv{{"actions[2].order", "actions.order_contiguous"}}},
		{"actions.order_contiguous zero", func(d *Definition) { d.Actions[0].Order = 0 }, []fv{{"actions[0].order", "actions.order_contiguous"}}},
		{"actions.order_contiguous shared order leaving a gap", func(d *Definition) { d.Actions[2].Order, d.Actions[3].Order = 2, 4 }, []fv{{"actions[3].order", "actions.order_contiguous"}}},
		{"action.activity_max_len", func(d *Definition) { d.Actions[0].Activity = long(257) }, []fv{{"actions[0].activity", "action.activity_max_len"}}},
		{"action.activity_pattern", func(d *Definition) { d.Actions[0].Activity = "create account" }, []fv{{"actions[0].activity", "action.activity_pattern"}}},
		{"action.queue_max_len", func(d *Definition) { d.Actions[0].Queue = long(129) }, []fv{{"actions[0].queue", "action.queue_max_len"}}},
		{"action.queue_pattern", func(d *Definition) { d.Actions[0].Queue = "q/1" }, []fv{{"actions[0].queue", "action.queue_pattern"}}},
		{"action.kind both", func(d *Definition) { d.Actions[2].Activity = "x" }, []fv{{"actions[2]", "action.kind"}}},
		{"action.kind neither", func(d *Definition) { d.Actions[0].Activity = "" }, []fv{{"actions[0]", "action.kind"}}},
		{"action.manual_signal", func(d *Definition) { d.Actions[2].Completion = CompletionManual }, []fv{{"actions[2]", "action.manual_signal"}}},
		{"action.input_json", func(d *Definition) { d.Actions[1].Input = json.RawMessage(`{"amount":`) }, []fv{{"actions[1].input", "action.input_json"}}},
		{"action.timeout_range", func(d *Definition) { d.Actions[0].Timeout = 31 * day }, []fv{{"actions[0].timeout_ms", "action.timeout_range"}}},
		{"action.timeout_range negative", func(d *Definition) { d.Actions[0].Timeout = -Ms(1) }, []fv{{"actions[0].timeout_ms", "action.timeout_range"}}},
		{"action.heartbeat_timeout_range", func(d *Definition) { d.Actions[0].HeartbeatTimeout = Ms(99) }, []fv{{"actions[0].heartbeat_timeout_ms", "action.heartbeat_timeout_range"}}},
		{"action.schedule_to_start_timeout_range", func(d *Definition) { d.Actions[0].ScheduleToStartTimeout = MaxTimeout + 1 }, []fv{{"actions[0].schedule_to_start_timeout_ms", "action.schedule_to_start_timeout_range"}}},
		{"action.schedule_to_start_timeout_range negative", func(d *Definition) { d.Actions[0].ScheduleToStartTimeout = -1 }, []fv{{"actions[0].schedule_to_start_timeout_ms", "action.schedule_to_start_timeout_range"}}},
		{"action.manual_timeout_range", func(d *Definition) { d.Actions[3].ManualTimeout = 31 * day }, []fv{{"actions[3].manual_timeout_ms", "action.manual_timeout_range"}}},
		{"action.on_failure_known", func(d *Definition) { d.Actions[0].OnFailure = "retry" }, []fv{{"actions[0].on_failure", "action.on_failure_known"}}},
		{"action.completion_mode_known", func(d *Definition) { d.Actions[0].Completion = "auto" }, []fv{{"actions[0].completion_mode", "action.completion_mode_known"}}},
		{"signal.name_required", func(d *Definition) { d.Actions[2].WaitForSignal.SignalName = "" }, []fv{{"actions[2].wait_for_signal.signal_name", "signal.name_required"}}},
		{"signal.name_max_len counts bytes", func(d *Definition) { d.Actions[2].WaitForSignal.SignalName = strings.Repeat("€", 86) }, []fv{{"actions[2].wait_for_signal.signal_name", "signal.name_max_len"}}},
		{"signal.name_utf8", func(d *Definition) { d.Actions[2].WaitForSignal.SignalName = "\xc3" }, []fv{{"actions[2].wait_for_signal.signal_name", "signal.name_utf8"}}},
		{"signal.timeout_range", func(d *Definition) { d.Actions[2].WaitForSignal.Timeout = 31 * day }, []fv{{"actions[2].wait_for_signal.timeout_ms", "signal.timeout_range"}}},
		{"retry.max_attempts_range above", func(d *Definition) { d.Actions[3].Retry.MaxAttempts = 11 }, []fv{{"actions[3].retry.max_attempts", "retry.max_attempts_range"}}},
		{"retry.max_attempts_range negative", func(d *Definition) { d.Actions[3].Retry.MaxAttempts = -1 }, []fv{{"actions[3].retry.max_attempts", "retry.max_attempts_range"}}},
		{"retry.strategy_known", func(d *Definition) { d.Actions[0].Retry.Strategy = "fibonacci" }, []fv{{"actions[0].retry.strategy", "retry.strategy_known"}}},
		{"retry.initial_backoff_range", func(d *Definition) { d.Actions[0].Retry.InitialBackoff = day + Ms(1) }, []fv{{"actions[0].retry.initial_backoff_ms", "retry.initial_backoff_range"}}},
		{"retry.initial_backoff_range negative", func(d *Definition) { d.Actions[0].Retry.InitialBackoff = -Ms(1) }, []fv{{"actions[0].retry.initial_backoff_ms", "retry.initial_backoff_range"}}},
		{"retry.max_backoff_range", func(d *Definition) { d.Actions[0].Retry.MaxBackoff = day + Ms(1) }, []fv{{"actions[0].retry.max_backoff_ms", "retry.max_backoff_range"}}},
		{"retry.max_backoff_gte_initial", func(d *Definition) {
			d.Actions[0].Retry.InitialBackoff, d.Actions[0].Retry.MaxBackoff = Ms(5000), Ms(1000)
		}, []fv{{"actions[0].retry.max_backoff_ms", "retry.max_backoff_gte_initial"}}},
		{"retry.multiplier_range below", func(d *Definition) { d.Actions[0].Retry.Multiplier = 0.5 }, []fv{{"actions[0].retry.backoff_multiplier", "retry.multiplier_range"}}},
		{"retry.multiplier_range above", func(d *Definition) { d.Actions[0].Retry.Multiplier = 100.5 }, []fv{{"actions[0].retry.backoff_multiplier", "retry.multiplier_range"}}},
		{"retry.multiplier_range NaN", func(d *Definition) { d.Actions[0].Retry.Multiplier = math.NaN() }, []fv{{"actions[0].retry.backoff_multiplier", "retry.multiplier_range"}}},
		{"retry.retryable_errors_known", func(d *Definition) { d.Actions[0].Retry.RetryableErrors = []ErrorClass{ErrorTimeout, "flaky"} }, []fv{{"actions[0].retry.retryable_errors[1]", "retry.retryable_errors_known"}}},
		{"retry.retryable_errors_max_items", func(d *Definition) {
			d.Actions[0].Retry.RetryableErrors = make([]ErrorClass, 33)
			for i := range d.Actions[0].Retry.RetryableErrors {
				d.Actions[0].Retry.RetryableErrors[i] = ErrorTimeout
			}
		}, []fv{{"actions[0].retry.retryable_errors", "retry.retryable_errors_max_items"}}},
		{"compensation.operation_required", func(d *Definition) { d.Actions[0].Compensation.Operation = "" }, []fv{{"actions[0].compensation.operation", "compensation.operation_required"}}},
		{"compensation.operation_max_len", func(d *Definition) { d.Actions[0].Compensation.Operation = long(257) }, []fv{{"actions[0].compensation.operation", "compensation.operation_max_len"}}},
		{"compensation.operation_pattern", func(d *Definition) { d.Actions[0].Compensation.Operation = "Delete it" }, []fv{{"actions[0].compensation.operation", "compensation.operation_pattern"}}},
		{"compensation.input_json", func(d *Definition) { d.Actions[0].Compensation.Input = json.RawMessage(`nope`) }, []fv{{"actions[0].compensation.input", "compensation.input_json"}}},
		{"compensation.timeout_range", func(d *Definition) { d.Actions[0].Compensation.Timeout = 31 * day }, []fv{{"actions[0].compensation.timeout_ms", "compensation.timeout_range"}}},
		{"compensation.queue_pattern", func(d *Definition) { d.Actions[0].Compensation.Queue = "_q" }, []fv{{"actions[0].compensation.queue", "compensation.queue_pattern"}}},
		{"compensation retry.max_attempts_range", func(d *Definition) { d.Actions[0].Compensation.Retry.MaxAttempts = 11 }, []fv{{"actions[0].compensation.retry.max_attempts", "retry.max_attempts_range"}}},
		{"secret.name_required", func(d *Definition) { d.Actions[1].Secrets[0].Name = "" }, []fv{{"actions[1].secrets[0].name", "secret.name_required"}}},
		{"secret.ref_required", func(d *Definition) { d.Actions[1].Secrets[0].Ref = "" }, []fv{{"actions[1].secrets[0].ref", "secret.ref_required"}}},
		{"secret.ref_max_len", func(d *Definition) { d.Actions[1].Secrets[0].Ref = long(1025) }, []fv{{"actions[1].secrets[0].ref", "secret.ref_max_len"}}},
		{"action.secrets_max_items", func(d *Definition) {
			for range 64 {
				d.Actions[1].Secrets = append(d.Actions[1].Secrets, SecretRef{Name: "n", Ref: "r"})
			}
		}, []fv{{"actions[1].secrets", "action.secrets_max_items"}}},
		{"dag.no_self_dependency", func(d *Definition) { d.Actions[1].DependsOn = []string{"b"} }, []fv{{"actions[1].depends_on[0]", "dag.no_self_dependency"}}},
		{"dag.dependency_exists", func(d *Definition) { d.Actions[1].DependsOn = []string{"a", "zz"} }, []fv{{"actions[1].depends_on[1]", "dag.dependency_exists"}}},
		{"dag.dependency_exists empty id", func(d *Definition) { d.Actions[1].DependsOn = []string{""} }, []fv{{"actions[1].depends_on[0]", "dag.dependency_exists"}}},
		{"dag.dependency_unique", func(d *Definition) { d.Actions[1].DependsOn = []string{"a", "a"} }, []fv{{"actions[1].depends_on[1]", "dag.dependency_unique"}}},
		{"dag.depends_on_max_items", func(d *Definition) { d.Actions[1].DependsOn = make([]string, MaxActions+1) }, nil},
		{"dag.no_cycle", func(d *Definition) { d.Actions[0].DependsOn = []string{"b"}; d.Actions[1].DependsOn = []string{"a"} },
			[]fv{{"actions[1].depends_on[0]", "dag.no_cycle"}}},
		{"dag.has_root", func(d *Definition) {
			for i := range d.Actions {
				d.Actions[i].DependsOn = []string{d.Actions[(i+1)%len(d.Actions)].ID}
			}
		}, []fv{{"actions", "dag.has_root"}, {"actions[3].depends_on[0]", "dag.no_cycle"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := validDefinition()
			tc.mutate(&d)
			got := violationsOf(t, d.Validate())
			if tc.want == nil { // only the first violation is asserted
				require.Equal(t, fv{"actions[1].depends_on", "dag.depends_on_max_items"}, got[0])
				return
			}
			require.Equal(t, tc.want, got)
		})
	}
}

// sequential answers n valid sequential actions.
func sequential(n int) []Action {
	out := make([]Action, n)
	for i := range out {
		out[i] = Action{ID: fmt.Sprintf("s%d", i), Order: i + 1, Activity: "work"}
	}
	return out
}

func TestValidate_ActionKindAllowsAManualActionWithOrWithoutActivity(t *testing.T) {
	t.Parallel()
	d := validDefinition()
	require.Empty(t, d.Actions[3].Activity)
	require.NoError(t, d.Validate())
	d.Actions[3].Activity = "review.prepare"
	require.NoError(t, d.Validate())
}

func TestValidate_MessagesNameTheRuleAndValue(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name   string
		mutate func(d *Definition)
		want   string
	}{
		{"order", func(d *Definition) { d.Actions[2].Order = 5 }, "order must be contiguous from 1: expected one of 1..4, got 5"},
		{"order gap", func(d *Definition) { d.Actions[2].Order, d.Actions[3].Order = 2, 4 }, "order must be contiguous from 1: expected one of 1..3, got 4"},
		{"max_attempts", func(d *Definition) { d.Actions[3].Retry.MaxAttempts = 11 }, "max_attempts must be between 1 and 10, got 11"},
		{"cycle", func(d *Definition) { d.Actions[0].DependsOn = []string{"b"}; d.Actions[1].DependsOn = []string{"a"} },
			"depends_on must not form a cycle: a -> b -> a"},
		{"id unique", func(d *Definition) { d.Actions[2].ID = "a" }, `id must be unique: "a" is also actions[0].id`},
		{"timeout", func(d *Definition) { d.Actions[0].Timeout = Ms(-5) }, "timeout_ms must be unset or between 1ms and 720h0m0s, got -5ms"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			d := validDefinition()
			tc.mutate(&d)
			var e *Error
			require.ErrorAs(t, d.Validate(), &e)
			require.Len(t, e.Violations, 1)
			require.Equal(t, tc.want, e.Violations[0].Message)
		})
	}
}

func TestValidate_ReportsAllViolationsAtOnce(t *testing.T) {
	t.Parallel()
	d := validDefinition()
	d.PlanID = ""
	d.Actions[0].Retry.MaxAttempts = 11
	d.Actions[1].Input = json.RawMessage(`{`)
	d.Actions[2].Order = 9
	d.Actions[3].DependsOn = []string{"missing"}
	d.Actions[0].Compensation.Operation = ""
	want := []fv{
		{"plan_id", "plan.id_required"},
		{"actions[0].retry.max_attempts", "retry.max_attempts_range"},
		{"actions[0].compensation.operation", "compensation.operation_required"},
		{"actions[1].input", "action.input_json"},
		{"actions[2].order", "actions.order_contiguous"},
		{"actions[3].depends_on[0]", "dag.dependency_exists"},
	}
	err := d.Validate()
	require.Equal(t, want, violationsOf(t, err))
	require.Equal(t, err.Error(), d.Validate().Error(), "the report is deterministic")
}

func TestValidate_CapsTheViolationList(t *testing.T) {
	t.Parallel()
	d := Definition{PlanID: "p", PlanVersion: "1", Actions: sequential(3)}
	d.Actions[0].DependsOn = make([]string, 0, 2*MaxViolations)
	for i := range 2 * MaxViolations {
		d.Actions[0].DependsOn = append(d.Actions[0].DependsOn, fmt.Sprintf("missing-%d", i))
	}
	var e *Error
	require.ErrorAs(t, d.Validate(), &e)
	require.Len(t, e.Violations, MaxViolations)
	require.Contains(t, e.Message, "100 more violations not listed")
}

func TestValidate_DAG(t *testing.T) {
	t.Parallel()
	dag := func(deps ...[]string) Definition {
		d := Definition{PlanID: "p", PlanVersion: "1", Actions: sequential(len(deps))}
		for i := range deps {
			d.Actions[i].DependsOn = deps[i]
		}
		return d
	}
	cases := []struct {
		name string
		def  Definition
		want []fv
	}{
		{"the diamond of the DAG-shape rule is valid", dag(nil, []string{"s0"}, []string{"s0"}, []string{"s1", "s2"}), nil},
		{"independent chains are allowed", dag(nil, []string{"s0"}, nil, []string{"s2"}), nil},
		{"a dependency may come later in the list", dag([]string{"s1"}, nil), nil},
		{"cycle of three", dag(nil, []string{"s0", "s3"}, []string{"s1"}, []string{"s2"}),
			[]fv{{"actions[2].depends_on[0]", "dag.no_cycle"}}},
		{"missing dependency", dag(nil, []string{"nope"}), []fv{{"actions[1].depends_on[0]", "dag.dependency_exists"}}},
		{"no root", dag([]string{"s1"}, []string{"s0"}),
			[]fv{{"actions", "dag.has_root"}, {"actions[1].depends_on[0]", "dag.no_cycle"}}},
		{"self dependency", dag(nil, []string{"s1"}), []fv{{"actions[1].depends_on[0]", "dag.no_self_dependency"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			err := tc.def.Validate()
			if tc.want == nil {
				require.NoError(t, err)
				return
			}
			require.Equal(t, tc.want, violationsOf(t, err))
		})
	}
}

func TestValidate_CyclePathIsReported(t *testing.T) {
	t.Parallel()
	d := Definition{PlanID: "p", PlanVersion: "1", Actions: sequential(4)}
	d.Actions[1].DependsOn = []string{"s0", "s3"}
	d.Actions[2].DependsOn = []string{"s1"}
	d.Actions[3].DependsOn = []string{"s2"}
	var e *Error
	require.ErrorAs(t, d.Validate(), &e)
	require.Equal(t, "depends_on must not form a cycle: s1 -> s3 -> s2 -> s1", e.Violations[0].Message)
}

// randomDAG answers a definition of n actions whose dependencies always point
// to actions earlier in a hidden topological order, shuffled in the list.
func randomDAG(r *rand.Rand, n int) Definition {
	topo := r.Perm(n) // topo[k] is the list index of the k-th action in topological order
	d := Definition{PlanID: "p", PlanVersion: "1", Actions: make([]Action, n)}
	for k, idx := range topo {
		a := Action{ID: fmt.Sprintf("act-%d", idx), Activity: "work"}
		for _, earlier := range r.Perm(k) {
			if r.IntN(3) == 0 {
				a.DependsOn = append(a.DependsOn, fmt.Sprintf("act-%d", topo[earlier]))
			}
		}
		d.Actions[idx] = a
	}
	for i, o := range r.Perm(n) {
		d.Actions[i].Order = o + 1
	}
	return d
}

func TestValidate_PropertyRandomAcyclicDefinitionsValidateAndABackEdgeFails(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(4, 2))
	for iter := range 300 {
		d := randomDAG(r, 1+r.IntN(40))
		require.NoError(t, d.Validate(), "iteration %d", iter)
		require.NoError(t, d.WithDefaults().Validate(), "iteration %d", iter)
		var from int
		var found bool
		for _, i := range r.Perm(len(d.Actions)) {
			if len(d.Actions[i].DependsOn) > 0 {
				from, found = i, true
				break
			}
		}
		if !found {
			continue
		}
		// from depends on dep: making dep depend on from closes a cycle.
		dep := d.Actions[from].DependsOn[r.IntN(len(d.Actions[from].DependsOn))]
		for i := range d.Actions {
			if d.Actions[i].ID == dep {
				d.Actions[i].DependsOn = append(d.Actions[i].DependsOn, d.Actions[from].ID)
			}
		}
		require.Contains(t, rulesOf(violationsOf(t, d.Validate())), "dag.no_cycle", "iteration %d", iter)
	}
}

// rulesOf answers the rule ids of violations.
func rulesOf(vs []fv) []string {
	out := make([]string, 0, len(vs))
	for _, v := range vs {
		out = append(out, v.rule)
	}
	return out
}

func TestDefaults_MatchTheSpec(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		got, want any
	}{
		{"000 §3.1 maxAttempts", DefaultMaxAttempts, 3},
		{"000 §3.1 initialBackoffMs", DefaultInitialBackoff.Milliseconds(), int64(1000)},
		{"000 §3.1 backoffMultiplier", DefaultBackoffMultiplier, 2.0},
		{"000 §3.1 maxBackoffMs", DefaultMaxBackoff.Milliseconds(), int64(30000)},
		{"002 strategy", DefaultBackoffStrategy, BackoffExponential},
		{"000 §3.2 timeoutMs", DefaultAttemptTimeout.Milliseconds(), int64(300000)},
		{"000 §4 on_failure", DefaultOnFailure, OnFailureCompensate},
		{"completion", DefaultCompletion, CompletionAutomated},
		{"queue", DefaultQueue, "default"},
		{"000 §4 hook maxAttempts", DefaultCompensationMaxAttempts, 2},
		{"000 §4 hook initialBackoffMs", DefaultCompensationInitialBackoff.Milliseconds(), int64(1000)},
		{"000 §4 hook backoffMultiplier", DefaultCompensationBackoffMultiplier, 2.0},
		{"000 §4 hook maxBackoffMs", DefaultCompensationMaxBackoff.Milliseconds(), int64(10000)},
	}
	for _, tc := range cases {
		require.EqualValues(t, tc.want, tc.got, tc.name)
	}
}

func TestWithDefaults_FillsUnsetFields(t *testing.T) {
	t.Parallel()
	d := validDefinition()
	d.Actions[1].Queue = "payments"
	d.Actions[1].Compensation = &CompensationHook{Operation: "refund"}
	d.Actions[1].Timeout = Ms(7000)
	got := d.WithDefaults()

	a := got.Actions[0]
	require.Equal(t, DefaultRetryPolicy(), a.Retry)
	require.Equal(t, RetryPolicy{MaxAttempts: 3, Strategy: BackoffExponential, InitialBackoff: Ms(1000), Multiplier: 2.0, MaxBackoff: Ms(30000)}, a.Retry)
	require.Equal(t, Ms(300000), a.Timeout)
	require.Equal(t, OnFailureCompensate, a.OnFailure)
	require.Equal(t, CompletionAutomated, a.Completion)
	require.Equal(t, "default", a.Queue)
	require.Equal(t, &CompensationHook{
		Operation: "account.delete",
		Timeout:   Ms(300000),
		Retry:     RetryPolicy{MaxAttempts: 2, Strategy: BackoffExponential, InitialBackoff: Ms(1000), Multiplier: 2.0, MaxBackoff: Ms(10000)},
		Queue:     "default",
	}, a.Compensation)

	hook := got.Actions[1].Compensation
	require.Equal(t, Ms(7000), hook.Timeout, "a hook's timeout defaults to its action's")
	require.Equal(t, "payments", hook.Queue, "a hook's queue defaults to its action's")
	require.Equal(t, CompletionManual, got.Actions[3].Completion)
	require.Zero(t, got.Timeout, "no workflow timeout by default")
	require.Empty(t, got.Backpressure, "the server decides backpressure")
}

func TestWithDefaults_KeepsSetValues(t *testing.T) {
	t.Parallel()
	set := RetryPolicy{MaxAttempts: 7, Strategy: BackoffLinear, InitialBackoff: Ms(200), Multiplier: 3, MaxBackoff: Ms(900),
		RetryableErrors: []ErrorClass{ErrorTimeout}}
	d := validDefinition()
	d.Actions[0].Retry = set
	d.Actions[0].Timeout = Ms(10)
	d.Actions[0].OnFailure = OnFailureHold
	d.Actions[0].Queue = "q"
	d.Actions[0].Compensation = &CompensationHook{Operation: "op", Retry: set, Timeout: Ms(20), Queue: "cq"}
	a := d.WithDefaults().Actions[0]
	require.Equal(t, set, a.Retry)
	require.Equal(t, set, a.Compensation.Retry)
	require.Equal(t, Ms(10), a.Timeout)
	require.Equal(t, Ms(20), a.Compensation.Timeout)
	require.Equal(t, OnFailureHold, a.OnFailure)
	require.Equal(t, "cq", a.Compensation.Queue)
}

func TestWithDefaults_NeverContradictsASetBackoff(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name          string
		in            RetryPolicy
		initial, capD Duration
	}{
		{"initial above the default cap raises the cap", RetryPolicy{InitialBackoff: Ms(45000)}, Ms(45000), Ms(45000)},
		{"cap below the default initial lowers the initial", RetryPolicy{MaxBackoff: Ms(500)}, Ms(500), Ms(500)},
		{"initial below the default cap keeps the default cap", RetryPolicy{InitialBackoff: Ms(2000)}, Ms(2000), Ms(30000)},
	}
	for _, tc := range cases {
		d := validDefinition()
		d.Actions[0].Retry = tc.in
		require.NoError(t, d.Validate(), tc.name)
		got := d.WithDefaults()
		require.NoError(t, got.Validate(), tc.name)
		require.Equal(t, tc.initial, got.Actions[0].Retry.InitialBackoff, tc.name)
		require.Equal(t, tc.capD, got.Actions[0].Retry.MaxBackoff, tc.name)
	}
}

func TestWithDefaults_NeverMutatesItsInput(t *testing.T) {
	t.Parallel()
	d := validDefinition()
	d.Actions[0].DependsOn = []string{"x"}
	d.Actions[0].Retry.RetryableErrors = []ErrorClass{ErrorTimeout}
	d.Actions[0].Compensation.Input = json.RawMessage(`{"k":1}`)
	before, err := json.Marshal(d)
	require.NoError(t, err)

	got := d.WithDefaults()
	got.Actions[0].DependsOn[0] = "changed"
	got.Actions[0].Retry.RetryableErrors[0] = ErrorUnknown
	got.Actions[0].Compensation.Operation = "changed"
	got.Actions[0].Compensation.Input[2] = 'X'
	got.Actions[1].Input[2] = 'X'
	got.Actions[1].Secrets[0].Name = "changed"
	got.Actions[2].WaitForSignal.SignalName = "changed"

	after, err := json.Marshal(d)
	require.NoError(t, err)
	require.JSONEq(t, string(before), string(after))
}

// requireConsistent asserts what a valid definition guarantees its readers.
func requireConsistent(t *testing.T, d Definition) {
	t.Helper()
	ids := map[string]bool{}
	orders := map[int]bool{}
	for _, a := range d.Actions {
		require.False(t, ids[a.ID], "duplicate id")
		ids[a.ID] = true
		require.True(t, a.Order >= 1 && a.Order <= len(d.Actions), "order out of 1..n")
		orders[a.Order] = true
		for _, dep := range a.DependsOn {
			require.True(t, ids[dep] || anyID(d, dep), "dangling dependency")
		}
	}
	for o := 1; o <= len(orders); o++ {
		require.True(t, orders[o], "orders are not contiguous from 1")
	}
}

// anyID reports whether some action of d has id.
func anyID(d Definition, id string) bool {
	for _, a := range d.Actions {
		if a.ID == id {
			return true
		}
	}
	return false
}

func FuzzValidate(f *testing.F) {
	seed, err := json.Marshal(validDefinition())
	require.NoError(f, err)
	f.Add(seed)
	f.Add([]byte(`{"plan_id":"p","plan_version":"1","actions":[{"id":"a","order":1,"activity":"x","depends_on":["a"]}]}`))
	f.Add([]byte(`{"plan_id":"p","plan_version":"1","actions":[{"id":"a","order":2,"depends_on":["b"]},{"id":"b","order":1,"depends_on":["a"]}]}`))
	f.Add([]byte(`{"actions":[{"retry":{"backoff_multiplier":1e308,"max_attempts":-3}}]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var d Definition
		if json.Unmarshal(data, &d) != nil {
			return
		}
		err := d.Validate()
		if err != nil {
			violationsOf(t, err)
			require.Equal(t, err.Error(), d.Validate().Error(), "deterministic")
			return
		}
		requireConsistent(t, d)
		require.NoError(t, d.WithDefaults().Validate(), "defaults keep a valid definition valid")
	})
}

func FuzzLoadYAML(f *testing.F) {
	for _, name := range []string{"spec002_compensation.yaml", "spec002_compensation_keys.yaml", "spec002_diamond.yaml", "full.yaml"} {
		data, err := os.ReadFile("testdata/" + name)
		require.NoError(f, err)
		f.Add(data)
	}
	f.Add([]byte("steps: [{name: a, dependsOn: [a]}]"))
	f.Add([]byte("a: &a [*a, *a]\nsteps: [{name: x, input: *a}]"))
	f.Add([]byte(`{"planId": "j", "steps": [{"name": "a", "timeout": "1s"}]}`))
	f.Add([]byte("spec: {requiresApproval: true, backpressure: queue, steps: [{name: a, manualTimeout: 1h, secrets: [{name: K, ref: r}], dependOn: b}]}"))
	f.Fuzz(func(t *testing.T, data []byte) {
		d, err := LoadYAML(data)
		if err != nil {
			violationsOf(t, err)
			return
		}
		full := d.WithDefaults()
		if full.Validate() != nil {
			return
		}
		requireConsistent(t, full)
		for i, a := range full.Actions {
			require.Equal(t, i+1, a.Order, "YAML order is list position")
		}
	})
}
