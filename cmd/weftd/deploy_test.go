package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// metricName finds the weft series a PromQL expression names.
var metricName = regexp.MustCompile(`\bweft_[a-z0-9_]+`)

// TestDeploy_DashboardAndAlertRulesLoadAndNameOnlyExportedMetrics: the
// Grafana dashboard is JSON with panels whose every query (and template
// variable) names only series weftd serves, and the Prometheus rules are
// rule groups whose every alert has an expression, a severity and a summary
// and names only such series. The series are those of a weftd (with its
// event bus) that ran the example workflow and a failing step.
func TestDeploy_DashboardAndAlertRulesLoadAndNameOnlyExportedMetrics(t *testing.T) {
	t.Parallel()
	exported := exportedSeries(t)

	raw, err := os.ReadFile(filepath.Join(repoRoot(t), "deploy", "grafana", "weft-dashboard.json"))
	require.NoError(t, err)
	var dash struct {
		Title  string `json:"title"`
		Panels []struct {
			Type    string `json:"type"`
			Title   string `json:"title"`
			Targets []struct {
				Expr string `json:"expr"`
			} `json:"targets"`
		} `json:"panels"`
		Templating struct {
			List []struct {
				Definition string `json:"definition"`
			} `json:"list"`
		} `json:"templating"`
	}
	require.NoError(t, json.Unmarshal(raw, &dash), "the dashboard is JSON")
	var queries []string
	for _, p := range dash.Panels {
		if p.Type == "row" {
			continue
		}
		require.NotEmpty(t, p.Targets, "panel %q has a query", p.Title)
		for _, target := range p.Targets {
			queries = append(queries, target.Expr)
		}
	}
	for _, v := range dash.Templating.List {
		if v.Definition != "" { // the data source variable has no query
			queries = append(queries, v.Definition)
		}
	}
	require.Greater(t, len(queries), 10)
	requireExported(t, "dashboard", queries, exported)

	raw, err = os.ReadFile(filepath.Join(repoRoot(t), "deploy", "prometheus", "weft-alerts.yaml"))
	require.NoError(t, err)
	var rules struct {
		Groups []struct {
			Name  string `yaml:"name"`
			Rules []struct {
				Alert       string            `yaml:"alert"`
				Expr        string            `yaml:"expr"`
				For         string            `yaml:"for"`
				Labels      map[string]string `yaml:"labels"`
				Annotations map[string]string `yaml:"annotations"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	dec := yaml.NewDecoder(strings.NewReader(string(raw)))
	dec.KnownFields(true)
	require.NoError(t, dec.Decode(&rules), "the rules are Prometheus rule groups")
	var exprs []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			require.NotEmpty(t, r.Alert, "group %s: a rule without a name", g.Name)
			require.NotEmpty(t, r.Expr, "alert %s has an expression", r.Alert)
			require.Regexp(t, `^P[123]$`, r.Labels["severity"], "alert %s has a severity", r.Alert)
			require.NotEmpty(t, r.Annotations["summary"], "alert %s has a summary", r.Alert)
			if r.For != "" {
				_, err := time.ParseDuration(r.For)
				require.NoError(t, err, "alert %s: for is a duration", r.Alert)
			}
			exprs = append(exprs, r.Expr)
		}
	}
	for _, alert := range []string{"PROJECTOR_LAG_HIGH", "PROJECTOR_NON_CONTIGUOUS_FETCH_DETECTED", "PROJECTOR_CAUSAL_VIOLATION", "PAUSE_DRAIN_TIMEOUT"} {
		require.Contains(t, strings.Join(exprs, "\n"), `alert="`+alert+`"`, "a rule for the engine's alert %s", alert)
	}
	requireExported(t, "alert rules", exprs, exported)
}

// requireExported requires every weft series the queries name to be served.
func requireExported(t *testing.T, what string, queries []string, exported map[string]bool) {
	t.Helper()
	for _, q := range queries {
		names := metricName.FindAllString(q, -1)
		require.NotEmpty(t, names, "%s: query %q names no weft series", what, q)
		for _, name := range names {
			require.True(t, exported[name], "%s: query %q names %s, which weftd does not serve", what, q, name)
		}
	}
}

// exportedSeries runs the example workflow and a step that fails on a
// weftd with its event bus, and answers the series /metrics then serves.
func exportedSeries(t *testing.T) map[string]bool {
	t.Helper()
	tr := newTraced(t, 0)
	d := startWeftdIn(t, t.TempDir(), "--bus", "memory")
	c := client.New(d.URL)
	stopWorker := tr.startWorker(t, d.URL)
	res, err := c.SubmitRun(context.Background(), &weftv1.SubmitRunRequest{Start: true, Definition: exampleDefinition(t)})
	require.NoError(t, err)
	finishExample(t, c, res.GetRun().GetRunId())
	bad, err := c.SubmitAndAwait(context.Background(), &weftv1.SubmitRunRequest{Start: true, Definition: &weftv1.WorkflowDefinition{
		PlanId: "bad-reserve", PlanVersion: "1", Actions: []*weftv1.Action{{Id: "reserve", Order: 1, Activity: "reserve-inventory",
			Retry: &weftv1.RetryPolicy{MaxAttempts: proto.Uint32(1)},
			Input: structpb.NewStructValue(&structpb.Struct{Fields: map[string]*structpb.Value{"quantity": structpb.NewNumberValue(0)}})}}}})
	require.NoError(t, err)
	require.Equal(t, weftv1.RunStatus_RUN_STATUS_FAILED, bad.GetStatus())
	stopWorker()
	resp, err := http.Get(d.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	exported := map[string]bool{}
	for _, line := range strings.Split(string(body), "\n") {
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		name := line[:strings.IndexAny(line, "{ ")]
		exported[name] = true
	}
	return exported
}
