package apitest

import (
	"context"
	"encoding/json"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// testRegistry: on every protocol, a definition stored under a new plan is
// answered by version and as the latest, the same body again is existing,
// another body under the version is refused naming plan and version, the
// plan's versions are listed, a run submitted by reference runs the stored
// definition, and a submission with neither or both of definition and
// definition_ref is invalid_argument naming definition. JSON-RPC reaches
// the same registry.
func testRegistry(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			ctx := context.Background()
			plan := uniqueName("registry")
			activity := uniqueName("registry.work")
			def := oneActivity(activity)
			def.PlanId = plan
			put, err := c.Definitions.PutDefinition(ctx, connect.NewRequest(&weftv1.PutDefinitionRequest{Definition: def}))
			require.NoError(t, err)
			require.False(t, put.Msg.GetExisting())
			require.True(t, put.Msg.GetVersion().GetLatest())
			require.Equal(t, uint32(3), put.Msg.GetDefinition().GetActions()[0].GetRetry().GetMaxAttempts(), "stored with its defaults")

			again, err := c.Definitions.PutDefinition(ctx, connect.NewRequest(&weftv1.PutDefinitionRequest{Definition: def}))
			require.NoError(t, err)
			require.True(t, again.Msg.GetExisting())

			other := oneActivity(activity + ".other")
			other.PlanId = plan
			_, err = c.Definitions.PutDefinition(ctx, connect.NewRequest(&weftv1.PutDefinitionRequest{Definition: other}))
			RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_OPERATION_CONFLICT)
			require.Contains(t, err.Error(), "plan "+plan+" version 1 is already stored")

			got, err := c.Definitions.GetDefinition(ctx, connect.NewRequest(&weftv1.GetDefinitionRequest{Ref: &weftv1.DefinitionRef{PlanId: plan}}))
			require.NoError(t, err)
			require.Equal(t, "1", got.Msg.GetVersion().GetPlanVersion())
			require.Equal(t, activity, got.Msg.GetDefinition().GetActions()[0].GetActivity())
			_, err = c.Definitions.GetDefinition(ctx, connect.NewRequest(&weftv1.GetDefinitionRequest{Ref: &weftv1.DefinitionRef{PlanId: plan, PlanVersion: "2"}}))
			RequireFault(t, err, weftv1.FaultCode_FAULT_CODE_NOT_FOUND)

			list, err := c.Definitions.ListDefinitions(ctx, connect.NewRequest(&weftv1.ListDefinitionsRequest{PlanId: plan}))
			require.NoError(t, err)
			require.Len(t, list.Msg.GetVersions(), 1)
			require.Equal(t, put.Msg.GetVersion().GetPlanSha256(), list.Msg.GetVersions()[0].GetPlanSha256())

			sub, err := c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{
				DefinitionRef: &weftv1.DefinitionRef{PlanId: plan, PlanVersion: "1"}, Start: true}))
			require.NoError(t, err)
			require.Equal(t, plan, sub.Msg.GetRun().GetPlanId())
			require.Equal(t, "1", sub.Msg.GetRun().GetPlanVersion())
			complete(t, c, pollOne(t, c, activity), nil)

			_, err = c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{}))
			RequireInvalidField(t, err, "definition", "definition.one_of")
			_, err = c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def,
				DefinitionRef: &weftv1.DefinitionRef{PlanId: plan}}))
			RequireInvalidField(t, err, "definition", "definition.one_of")
		})
	}
	t.Run("jsonrpc", func(t *testing.T) {
		plan := uniqueName("registry")
		def := map[string]any{"plan_id": plan, "plan_version": "1",
			"actions": []any{map[string]any{"id": "work", "order": 1, "activity": "a"}}}
		res := CallJSONRPC(t, baseURL, 1, "weft.v1.DefinitionService/PutDefinition", map[string]any{"definition": def}, nil)
		require.Nil(t, res.Error)
		res = CallJSONRPC(t, baseURL, 2, "weft.v1.DefinitionService/GetDefinition", map[string]any{"ref": map[string]any{"plan_id": plan}}, nil)
		require.Nil(t, res.Error)
		var got struct {
			Version struct {
				PlanVersion string `json:"plan_version"`
			} `json:"version"`
		}
		require.NoError(t, json.Unmarshal(res.Result, &got))
		require.Equal(t, "1", got.Version.PlanVersion)
	})
}
