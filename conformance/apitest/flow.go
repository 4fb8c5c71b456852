package apitest

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// testFlowControl: on every protocol, a step's concurrency and throttle
// are accepted, kept in the run's definition and enforced (a second task
// of a key at limit 1 waits for the first's report); bad flow control is
// invalid_argument naming the field — by the API's path in a definition,
// by the YAML path in ParseDefinition (docs/semantics.md#step-concurrency).
func testFlowControl(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			ctx := context.Background()
			activity := uniqueName("flow")
			def := oneActivity(activity)
			def.PlanId = uniqueName("flow-plan")
			def.Actions[0].Concurrency = &weftv1.StepConcurrency{Key: "input.customer", Limit: 1}
			def.Actions[0].Throttle = &weftv1.StepThrottle{Key: "'psp'", Rate: "1000/1s", Burst: 10, Scope: "tenant"}
			inputValue, err := structpb.NewValue(map[string]any{"customer": "c-1"})
			require.NoError(t, err)
			var runs []*weftv1.Run
			for range 2 {
				res, err := c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true, Input: inputValue}))
				require.NoError(t, err)
				runs = append(runs, res.Msg.GetRun())
			}
			got := getRun(t, c, runs[0].GetRunId()).GetDefinition().GetActions()[0]
			require.Equal(t, "input.customer", got.GetConcurrency().GetKey())
			require.Equal(t, uint32(1), got.GetConcurrency().GetLimit())
			require.Equal(t, "1000/1s", got.GetThrottle().GetRate())
			first := pollOne(t, c, activity)
			res, err := c.Workers.PollTasks(ctx, connect.NewRequest(&weftv1.PollTasksRequest{WorkerId: "apitest-worker",
				Activities: []*weftv1.ActivityRegistration{{Name: activity}}, MaxTasks: 5}))
			require.NoError(t, err)
			require.Empty(t, res.Msg.GetTasks(), "the key is at its limit")
			complete(t, c, first, nil)
			complete(t, c, pollOne(t, c, activity), nil)

			bad := oneActivity(uniqueName("flow"))
			bad.Actions[0].Throttle = &weftv1.StepThrottle{Key: "'k'", Rate: "fast"}
			_, err = c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: bad, Start: true}))
			RequireInvalidField(t, err, "definition.actions[0].throttle.rate", "flow.rate_format")
			bad.Actions[0].Throttle = nil
			bad.Actions[0].Concurrency = &weftv1.StepConcurrency{Key: "'k'", Limit: 0}
			_, err = c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: bad, Start: true}))
			RequireInvalidField(t, err, "definition.actions[0].concurrency.limit", "uint32.gte_lte")

			doc := "planId: flow-parse\nsteps:\n  - name: charge\n    concurrency: {key: \"1 + 2\", limit: 2}\n"
			_, err = c.Definitions.ParseDefinition(ctx, connect.NewRequest(&weftv1.ParseDefinitionRequest{Yaml: doc}))
			RequireInvalidField(t, err, "steps[0].concurrency.key", "expression_result_type")
			doc = "planId: flow-parse\nsteps:\n  - name: charge\n    throttle: {key: \"'k'\", rate: fast}\n"
			_, err = c.Definitions.ParseDefinition(ctx, connect.NewRequest(&weftv1.ParseDefinitionRequest{Yaml: doc}))
			RequireInvalidField(t, err, "steps[0].throttle.rate", "flow.rate_format")
		})
	}
}
