package apitest

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// testParseDefinition: on every protocol, ParseDefinition answers the
// WorkflowDefinition a YAML document describes (which SubmitRun then runs)
// and stores nothing; an invalid document is invalid_argument naming the
// problem by its YAML path, and a document that is not YAML names yaml.
// JSON-RPC reaches the same call.
func testParseDefinition(t *testing.T, baseURL string) {
	for _, p := range Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := NewClients(baseURL, p)
			ctx := context.Background()
			plan := uniqueName("parsed")
			activity := uniqueName("parsed.work")
			doc := "metadata:\n  name: " + plan + "\n  version: \"2\"\nspec:\n  steps:\n    - name: work\n      activity: " + activity +
				"\n      timeout: 30s\n      input: {sku: W-1}\n"
			res, err := c.Definitions.ParseDefinition(ctx, connect.NewRequest(&weftv1.ParseDefinitionRequest{Yaml: doc}))
			require.NoError(t, err)
			def := res.Msg.GetDefinition()
			require.Equal(t, plan, def.GetPlanId())
			require.Equal(t, "2", def.GetPlanVersion())
			require.Len(t, def.GetActions(), 1)
			require.Equal(t, activity, def.GetActions()[0].GetActivity())
			require.Equal(t, uint32(30_000), def.GetActions()[0].GetTimeoutMs())

			list, err := c.Definitions.ListDefinitions(ctx, connect.NewRequest(&weftv1.ListDefinitionsRequest{PlanId: plan}))
			require.NoError(t, err)
			require.Empty(t, list.Msg.GetVersions(), "parsing stores nothing")
			sub, err := c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{Definition: def, Start: true}))
			require.NoError(t, err)
			require.Equal(t, plan, sub.Msg.GetRun().GetPlanId())
			complete(t, c, pollOne(t, c, activity), nil)

			bad := "metadata: {name: " + plan + "}\nspec:\n  steps:\n    - name: a\n    - name: b\n      timeout: soon\n"
			_, err = c.Definitions.ParseDefinition(ctx, connect.NewRequest(&weftv1.ParseDefinitionRequest{Yaml: bad}))
			RequireInvalidField(t, err, "spec.steps[1].timeout", "yaml.duration")
			_, err = c.Definitions.ParseDefinition(ctx, connect.NewRequest(&weftv1.ParseDefinitionRequest{Yaml: "steps: [a\n"}))
			RequireInvalidField(t, err, "yaml", "yaml.syntax")
			_, err = c.Definitions.ParseDefinition(ctx, connect.NewRequest(&weftv1.ParseDefinitionRequest{}))
			RequireInvalidField(t, err, "yaml", "string.min_len")
		})
	}
	t.Run("jsonrpc", func(t *testing.T) {
		res := CallJSONRPC(t, baseURL, 1, "weft.v1.DefinitionService/ParseDefinition",
			map[string]any{"yaml": "planId: parsed-jsonrpc\nsteps:\n  - name: work\n    activity: a\n"}, nil)
		require.Nil(t, res.Error)
		require.Contains(t, string(res.Result), `"activity":"a"`)
	})
}
