package server

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/eventpb"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// requireEnumRoundTrip proves that every proto value but UNSPECIFIED maps to
// an engine value and back, and that UNSPECIFIED is the engine's "".
func requireEnumRoundTrip[P ~int32, E ~string](t *testing.T, names map[int32]string, table eventpb.EnumTable[P, E]) {
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
	t.Parallel()
	cases := map[string]func(t *testing.T){
		"BackoffStrategy":  func(t *testing.T) { requireEnumRoundTrip(t, weftv1.BackoffStrategy_name, backoffStrategies) },
		"OnFailure":        func(t *testing.T) { requireEnumRoundTrip(t, weftv1.OnFailure_name, onFailures) },
		"CompletionMode":   func(t *testing.T) { requireEnumRoundTrip(t, weftv1.CompletionMode_name, completionModes) },
		"BackpressureMode": func(t *testing.T) { requireEnumRoundTrip(t, weftv1.BackpressureMode_name, backpressureModes) },
		"TaskType":         func(t *testing.T) { requireEnumRoundTrip(t, weftv1.TaskType_name, taskTypes) },
	}
	for name, check := range cases {
		t.Run(name, check)
	}
}

func TestEnumTables_UnknownValuesMapToUnset(t *testing.T) {
	t.Parallel()
	require.Equal(t, weftv1.OnFailure_ON_FAILURE_UNSPECIFIED, onFailures.Proto("FROM_THE_FUTURE"))
	require.Empty(t, taskTypes.Engine(weftv1.TaskType(999)))
}
