package main

import (
	"encoding/json"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/testkit"
)

// The composition example (examples/composition/README.md) as a user runs
// it: real weftd, the example's worker and the weft CLI; the stored notify
// definition put once, then an order submitted with --start --wait, which
// exits 0 when the run is COMPLETED (docs/semantics.md#sub-workflows, #when,
// #repeat, #sleep, #input-expressions, #compensation-input).
func TestCompositionExample_RunsToCompletedWithSubmitStartWait(t *testing.T) {
	t.Parallel()
	r := startReal(t)
	worker := filepath.Join(testkit.Build(t, "./examples/composition/worker"), "worker")
	testkit.StartProcess(t, worker, []string{"WEFT_URL=" + r.url}, nil)
	dir := "../../examples/composition/"

	res := r.weft("definition", "put", dir+"notify.yaml")
	require.Equal(t, 0, res.code, res.stderr)

	shipAfter := time.Now().Add(2 * time.Second).UTC().Format(time.RFC3339)
	for _, tc := range []struct {
		name    string
		amount  int
		charged bool
	}{
		{"a paid order is charged and gets a receipt", 4200, true},
		{"a free order skips the charge and its receipt", 0, false},
	} {
		in := `{"orderId":"o-1","customer":"ada@example.com","amount":` + strconv.Itoa(tc.amount) +
			`,"lines":[{"sku":"WIDGET-1","quantity":2},{"sku":"GADGET-7","quantity":1},{"sku":"BOLT-3","quantity":12}],"carrier":"post","shipAfter":"` + shipAfter + `"}`
		res := r.weft("submit", dir+"order.yaml", "--start", "--wait", "--input", in, "-o", "json")
		require.Equal(t, 0, res.code, "%s: weft submit --start --wait exits 0 on COMPLETED\n%s\n%s", tc.name, res.stdout, res.stderr)
		var out struct {
			Run struct {
				RunID  string `json:"run_id"`
				Status string `json:"status"`
			} `json:"run"`
		}
		require.NoError(t, json.Unmarshal([]byte(res.stdout), &out), res.stdout)
		require.Equal(t, "RUN_STATUS_COMPLETED", out.Run.Status, tc.name)

		run := getRun(t, r.c, out.Run.RunID)
		steps := stepsByID(run)
		require.Equal(t, weftv1.StepStatus_STEP_STATUS_SUCCEEDED, steps["stock"].GetStatus(), tc.name)
		require.GreaterOrEqual(t, steps["stock"].GetIteration(), uint32(2), "%s: the repeat ran until the stock was ready", tc.name)
		parcels := steps["ship"].GetOutput().GetListValue().GetValues()
		require.Len(t, parcels, 3, "%s: ship fans out one item per line, its output their list", tc.name)
		for i, p := range parcels {
			require.True(t, strings.HasPrefix(p.GetStructValue().GetFields()["tracking"].GetStringValue(), "trk-"), tc.name)
			item := steps["ship["+strconv.Itoa(i)+"]"]
			require.Equal(t, weftv1.StepStatus_STEP_STATUS_SUCCEEDED, item.GetStatus(), "%s: item %d", tc.name, i)
			require.Equal(t, p.GetStructValue().GetFields()["tracking"].GetStringValue(),
				item.GetOutput().GetStructValue().GetFields()["tracking"].GetStringValue(), "%s: the list is in line order", tc.name)
		}
		shipped := getRun(t, r.c, steps["notify-shipped"].GetChildRunId())
		require.Equal(t, "notify", shipped.GetPlanId(), "%s: notify-shipped runs the stored plan", tc.name)
		require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, shipped.GetStatus())

		payment := getRun(t, r.c, steps["payment"].GetChildRunId())
		require.Equal(t, "order-composition.payment", payment.GetPlanId(), "%s: payment is an inline child", tc.name)
		child := stepsByID(payment)
		if tc.charged {
			require.Equal(t, weftv1.StepStatus_STEP_STATUS_SUCCEEDED, child["charge"].GetStatus(), tc.name)
			receipt := getRun(t, r.c, child["receipt"].GetChildRunId())
			require.Equal(t, "notify", receipt.GetPlanId(), "%s: the receipt runs the same stored plan", tc.name)
			require.Equal(t, weftv1.RunStatus_RUN_STATUS_COMPLETED, receipt.GetStatus())
		} else {
			require.Equal(t, weftv1.StepStatus_STEP_STATUS_SKIPPED, child["charge"].GetStatus(), "%s: when skipped the charge", tc.name)
			require.Equal(t, weftv1.StepStatus_STEP_STATUS_SKIPPED, child["receipt"].GetStatus(), tc.name)
		}
	}
}

func getRun(t *testing.T, c *client.Client, runID string) *weftv1.Run {
	t.Helper()
	require.NotEmpty(t, runID)
	run, err := c.GetRun(t.Context(), runID)
	require.NoError(t, err)
	return run
}

func stepsByID(run *weftv1.Run) map[string]*weftv1.Step {
	out := map[string]*weftv1.Step{}
	for _, st := range run.GetSteps() {
		out[st.GetActionId()] = st
	}
	return out
}
