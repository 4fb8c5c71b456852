package server

import (
	"testing"

	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// requireEnumRoundTrip proves that every proto value but UNSPECIFIED maps to
// an engine value and back, and that UNSPECIFIED is the engine's "".
func requireEnumRoundTrip[P ~int32, E ~string](t *testing.T, names map[int32]string, table enumTable[P, E]) {
	t.Helper()
	for num, name := range names {
		if num == 0 {
			require.Equal(t, E(""), table.engine(0), name)
			require.Equal(t, P(0), table.proto(""), name)
			continue
		}
		e := table.engine(P(num))
		require.NotEmpty(t, e, "%s maps to no engine value", name)
		require.Equal(t, P(num), table.proto(e), "%s does not map back", name)
	}
	require.Len(t, table.toEngine, len(names)-1, "the table maps values the proto does not have")
	require.Len(t, table.toProto, len(names)-1, "two proto values map to one engine value")
}

func TestEnumTables_MapEveryProtoValueToTheEngineAndBack(t *testing.T) {
	cases := map[string]func(t *testing.T){
		"ErrorClass":          func(t *testing.T) { requireEnumRoundTrip(t, weftv1.ErrorClass_name, errorClasses) },
		"BackoffStrategy":     func(t *testing.T) { requireEnumRoundTrip(t, weftv1.BackoffStrategy_name, backoffStrategies) },
		"OnFailure":           func(t *testing.T) { requireEnumRoundTrip(t, weftv1.OnFailure_name, onFailures) },
		"CompletionMode":      func(t *testing.T) { requireEnumRoundTrip(t, weftv1.CompletionMode_name, completionModes) },
		"BackpressureMode":    func(t *testing.T) { requireEnumRoundTrip(t, weftv1.BackpressureMode_name, backpressureModes) },
		"RunStatus":           func(t *testing.T) { requireEnumRoundTrip(t, weftv1.RunStatus_name, runStatuses) },
		"RunSubstatus":        func(t *testing.T) { requireEnumRoundTrip(t, weftv1.RunSubstatus_name, runSubstatuses) },
		"StepStatus":          func(t *testing.T) { requireEnumRoundTrip(t, weftv1.StepStatus_name, stepStatuses) },
		"CompensationStatus":  func(t *testing.T) { requireEnumRoundTrip(t, weftv1.CompensationStatus_name, compensationStatuses) },
		"CompensationOutcome": func(t *testing.T) { requireEnumRoundTrip(t, weftv1.CompensationOutcome_name, compensationOutcomes) },
		"AttemptOutcome":      func(t *testing.T) { requireEnumRoundTrip(t, weftv1.AttemptOutcome_name, attemptOutcomes) },
		"TaskType":            func(t *testing.T) { requireEnumRoundTrip(t, weftv1.TaskType_name, taskTypes) },
		"SignalKind":          func(t *testing.T) { requireEnumRoundTrip(t, weftv1.SignalKind_name, signalKinds) },
		"ManualOutcome":       func(t *testing.T) { requireEnumRoundTrip(t, weftv1.ManualOutcome_name, manualOutcomes) },
	}
	for name, check := range cases {
		t.Run(name, check)
	}
}

func TestEnumTables_UnknownValuesMapToUnset(t *testing.T) {
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_UNSPECIFIED, runStatuses.proto("FROM_THE_FUTURE"))
	require.Empty(t, errorClasses.engine(weftv1.ErrorClass(999)))
}
