package eventpb

import (
	"testing"

	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// requireEnumRoundTrip proves that every proto value but UNSPECIFIED maps to
// an engine value and back, and that UNSPECIFIED is the engine's "".
func requireEnumRoundTrip[P ~int32, E ~string](t *testing.T, names map[int32]string, table EnumTable[P, E]) {
	t.Helper()
	for num, name := range names {
		if num == 0 {
			require.Equal(t, E(""), table.Engine(0), name)
			require.Equal(t, P(0), table.Proto(""), name)
			continue
		}
		e := table.Engine(P(num))
		require.NotEmpty(t, e, "%s maps to no engine value", name)
		require.Equal(t, P(num), table.Proto(e), "%s does not map back", name)
	}
	protoValues, engineValues := table.Len()
	require.Equal(t, len(names)-1, protoValues, "the table maps values the proto does not have")
	require.Equal(t, len(names)-1, engineValues, "two proto values map to one engine value")
}

func TestEnumTables_MapEveryProtoValueToTheEngineAndBack(t *testing.T) {
	cases := map[string]func(t *testing.T){
		"ErrorClass":          func(t *testing.T) { requireEnumRoundTrip(t, weftv1.ErrorClass_name, ErrorClasses) },
		"VerifyState":         func(t *testing.T) { requireEnumRoundTrip(t, weftv1.VerifyState_name, VerifyStates) },
		"RunStatus":           func(t *testing.T) { requireEnumRoundTrip(t, weftv1.RunStatus_name, RunStatuses) },
		"RunSubstatus":        func(t *testing.T) { requireEnumRoundTrip(t, weftv1.RunSubstatus_name, RunSubstatuses) },
		"StepStatus":          func(t *testing.T) { requireEnumRoundTrip(t, weftv1.StepStatus_name, StepStatuses) },
		"CompensationStatus":  func(t *testing.T) { requireEnumRoundTrip(t, weftv1.CompensationStatus_name, CompensationStatuses) },
		"CompensationOutcome": func(t *testing.T) { requireEnumRoundTrip(t, weftv1.CompensationOutcome_name, CompensationOutcomes) },
		"AttemptOutcome":      func(t *testing.T) { requireEnumRoundTrip(t, weftv1.AttemptOutcome_name, AttemptOutcomes) },
		"SignalKind":          func(t *testing.T) { requireEnumRoundTrip(t, weftv1.SignalKind_name, SignalKinds) },
		"ManualOutcome":       func(t *testing.T) { requireEnumRoundTrip(t, weftv1.ManualOutcome_name, ManualOutcomes) },
	}
	for name, check := range cases {
		t.Run(name, check)
	}
}

func TestEnumTables_UnknownValuesMapToUnset(t *testing.T) {
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_UNSPECIFIED, RunStatuses.Proto("FROM_THE_FUTURE"))
	require.Empty(t, ErrorClasses.Engine(weftv1.ErrorClass(999)))
}
