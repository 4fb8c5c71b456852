package main

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// consoleOperate is what console/test/operate.ts reads.
type consoleOperate struct {
	URL string `json:"url"`
	// Plan is stored in the registry in versions 1 and 2; Batch is the plan
	// of BatchRuns, of which the browser cancels the first three.
	Plan      string   `json:"plan"`
	BatchPlan string   `json:"batchPlan"`
	BatchRuns []string `json:"batchRuns"`
	Shots     string   `json:"shots"`
	// QueryServed: this weftd serves run queries; until search's engine
	// does, a query is refused as unavailable (failed_precondition).
	QueryServed bool `json:"queryServed"`
}

// operateOut is what console/test/operate.ts prints on its last line: the
// runs it started and the batch it ran.
type operateOut struct {
	YAMLRun     string `json:"yamlRun"`
	RegistryRun string `json:"registryRun"`
	PendingRun  string `json:"pendingRun"`
	Batch       string `json:"batch"`
	// BatchByQuery: the batch over every matching run started (a weftd
	// whose batches cannot select by a query refuses it naming query).
	BatchByQuery bool `json:"batchByQuery"`
}

// waitDefinition is a one-step plan that waits for a signal named go.
func waitDefinition(plan, version string) *weftv1.WorkflowDefinition {
	return &weftv1.WorkflowDefinition{PlanId: plan, PlanVersion: version, DisplayName: "Restock " + version,
		Actions: []*weftv1.Action{{Id: "wait-" + version, Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}}}}
}

// TestConsole_StartsRunsAndRunsBatchesInChromium clicks through the
// console's start-a-run form and its batch actions in headless Chromium
// against a real weftd: pasted YAML with a bad duration is refused naming
// its YAML path beside the YAML, an input that is not JSON is shown at its
// line and column and nothing is sent, then the fixed YAML runs with its
// input and opens the new run; a run from the registry's version 1 (not the
// latest) runs that version; a run submitted without start waits PENDING;
// three runs selected in the list are cancelled by one batch whose dialog
// says it touches three runs, and whose page follows it to COMPLETED with
// each run's outcome; a submit and a batch whose first answer the network
// lost are pressed again and answer the same run and the same batch; a view of the list's filters is saved, reopened from
// the picker and from a link in another tab, saved again under its name
// (replaced) and deleted; a query weftd refuses is shown under the query
// box. Then the API confirms what the clicks did.
func TestConsole_StartsRunsAndRunsBatchesInChromium(t *testing.T) {
	t.Parallel()
	node, browser := requireConsoleTools(t)
	d := startWeftdIn(t, t.TempDir())
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	c := client.New(d.URL)
	const plan, batchPlan = "restock", "nightly-sweep"
	for _, v := range []string{"1", "2"} {
		_, err := c.PutDefinition(ctx, waitDefinition(plan, v))
		require.NoError(t, err)
	}
	cfg := consoleOperate{URL: d.URL, Plan: plan, BatchPlan: batchPlan, Shots: os.Getenv("WEFT_CONSOLE_SHOTS")}
	if cfg.Shots == "" {
		cfg.Shots = t.TempDir()
	}
	_, err := c.ListRuns(ctx, &weftv1.ListRunsRequest{Query: `status = "FAILED"`})
	cfg.QueryServed = !client.IsCode(err, client.CodeCapabilityUnavailable) && !client.IsCode(err, client.CodeFailedPrecondition)
	if !cfg.QueryServed {
		t.Log("this weftd serves no run queries yet: the query box is checked to show the capability fault, not a parse error's column")
	}

	for range 4 {
		res, err := c.SubmitRun(ctx, &weftv1.SubmitRunRequest{Start: true, Definition: waitDefinition(batchPlan, "1")})
		require.NoError(t, err)
		cfg.BatchRuns = append(cfg.BatchRuns, res.GetRun().GetRunId())
	}

	arg, err := json.Marshal(cfg)
	require.NoError(t, err)
	drive := exec.CommandContext(ctx, node, filepath.Join(repoRoot(t), "console/test-dist/operate.mjs"), string(arg))
	drive.Dir = repoRoot(t)
	drive.Env = append(os.Environ(), "CHROMIUM="+browser)
	var stderr bytes.Buffer
	drive.Stderr = &stderr
	stdout, err := drive.Output()
	require.NoError(t, err, "the console test:\n%s\nweftd:\n%s", stderr.String(), tail(d.Logs(), 40))
	t.Logf("%s", stderr.String())
	var out operateOut
	require.NoError(t, json.Unmarshal(lastLine(stdout), &out), "%s", stdout)
	t.Logf("queries served: %v; batches by query served: %v", cfg.QueryServed, out.BatchByQuery)

	pasted, err := c.ListRuns(ctx, &weftv1.ListRunsRequest{PlanId: "pasted"})
	require.NoError(t, err)
	require.Len(t, pasted.GetRuns(), 1, "a submit pressed again after its answer was lost is the same run")
	batches, err := c.ListBatches(ctx, &weftv1.ListBatchesRequest{})
	require.NoError(t, err)
	byQuery := 0
	for _, b := range batches.GetBatches() {
		if b.GetQuery() != "" {
			byQuery++
		}
	}
	require.Len(t, batches.GetBatches(), 1+byQuery, "a batch confirmed again after its answer was lost is the same batch")
	require.Equal(t, map[bool]int{true: 1, false: 0}[out.BatchByQuery], byQuery, "the batch over every run matching the filters, when weftd's batches select by a query")
	yamlRun, err := c.GetRun(ctx, out.YAMLRun)
	require.NoError(t, err)
	require.Equal(t, "pasted", yamlRun.GetPlanId())
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_BLOCKED, yamlRun.GetStatus(), "started, waiting for its signal")
	require.Equal(t, "A-1001", yamlRun.GetInput().GetStructValue().GetFields()["order"].GetStringValue(), "the input typed in the console")
	registryRun, err := c.GetRun(ctx, out.RegistryRun)
	require.NoError(t, err)
	require.Equal(t, plan, registryRun.GetPlanId())
	require.Equal(t, "1", registryRun.GetPlanVersion(), "the version picked, not the latest")
	pending, err := c.GetRun(ctx, out.PendingRun)
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_PENDING, pending.GetStatus(), "submitted without start")
	require.Equal(t, "2", pending.GetPlanVersion(), "the plan's latest")

	for i, id := range cfg.BatchRuns {
		run, err := c.GetRun(ctx, id)
		require.NoError(t, err)
		want := weftv1.RunStatus_RUN_STATUS_CANCELLED
		if i == 3 {
			want = weftv1.RunStatus_RUN_STATUS_BLOCKED // not selected
			if out.BatchByQuery {
				want = weftv1.RunStatus_RUN_STATUS_PAUSED // the one run the batch by query matched
			}
		}
		require.Equal(t, want, run.GetStatus(), id)
	}
	batch, err := c.DescribeBatch(ctx, &weftv1.DescribeBatchRequest{BatchId: out.Batch})
	require.NoError(t, err)
	require.Equal(t, weftv1.BatchState_BATCH_STATE_COMPLETED, batch.GetBatch().GetState())
	require.Equal(t, uint32(3), batch.GetBatch().GetSucceeded())
	require.Equal(t, weftv1.BatchOperation_BATCH_OPERATION_CANCEL, batch.GetBatch().GetOperation())

	views, err := weftv1connect.NewViewServiceClient(http.DefaultClient, d.URL).ListViews(ctx, connect.NewRequest(&weftv1.ListViewsRequest{}))
	require.NoError(t, err)
	require.Len(t, views.Msg.GetViews(), 1, "the deleted view is gone")
	saved := views.Msg.GetViews()[0]
	require.Equal(t, "cancelled sweeps", saved.GetName())
	require.Equal(t, batchPlan, saved.GetFilters().GetPlanId())
	require.Equal(t, []weftv1.RunStatus{weftv1.RunStatus_RUN_STATUS_CANCELLED}, saved.GetFilters().GetStatuses())
	require.Empty(t, saved.GetQuery())
}

// lastLine answers the last non-empty line of out.
func lastLine(out []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(out), []byte("\n"))
	return lines[len(lines)-1]
}
