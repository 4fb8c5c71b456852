package client_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/client"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/testkit"
)

// startServer serves a fresh in-process weftd and answers its URL and a
// stop function (for the Examples, which have no test).
func startServer() (url string, stop func()) {
	s, err := testkit.New(testkit.Options{})
	if err != nil {
		panic(err)
	}
	return s.URL, s.Close
}

// setupURL serves a fresh in-process weftd for the test.
func setupURL(t *testing.T) string {
	t.Helper()
	return testkit.Start(t, testkit.Options{}).URL
}

// proxy forwards to target, letting the test see and alter each request.
func proxy(t *testing.T, target string, around func(w http.ResponseWriter, r *http.Request, forward http.HandlerFunc)) string {
	t.Helper()
	fwd := func(w http.ResponseWriter, r *http.Request) {
		req, err := http.NewRequestWithContext(r.Context(), r.Method, target+r.URL.Path, r.Body)
		require.NoError(t, err)
		req.Header = r.Header.Clone()
		res, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer res.Body.Close()
		for k, vs := range res.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(res.StatusCode)
		buf := make([]byte, 32<<10)
		for {
			n, rerr := res.Body.Read(buf)
			if n > 0 {
				_, _ = w.Write(buf[:n])
				if f, ok := w.(http.Flusher); ok {
					f.Flush()
				}
			}
			if rerr != nil {
				return
			}
		}
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { around(w, r, fwd) }))
	t.Cleanup(srv.Close)
	return srv.URL
}

// oneStep is a definition with one automated action.
func oneStep(activity string) *weftv1.WorkflowDefinition {
	return &weftv1.WorkflowDefinition{PlanId: "plan", PlanVersion: "1",
		Actions: []*weftv1.Action{{Id: "a", Order: 1, Activity: activity}}}
}

// waitingForSignal is a definition whose only action waits for the signal "go".
func waitingForSignal() *weftv1.WorkflowDefinition {
	return &weftv1.WorkflowDefinition{PlanId: "plan", PlanVersion: "1",
		Actions: []*weftv1.Action{{Id: "wait", Order: 1, WaitForSignal: &weftv1.WaitForSignal{SignalName: "go"}}}}
}

func submit(t *testing.T, c *client.Client, def *weftv1.WorkflowDefinition) *weftv1.Run {
	t.Helper()
	res, err := c.SubmitRun(context.Background(), &weftv1.SubmitRunRequest{Definition: def, Start: true})
	require.NoError(t, err)
	return res.GetRun()
}

// eventually polls GetRun until cond holds.
func eventually(t *testing.T, c *client.Client, runID string, cond func(*weftv1.Run) bool) *weftv1.Run {
	t.Helper()
	var run *weftv1.Run
	require.Eventually(t, func() bool {
		var err error
		run, err = c.GetRun(context.Background(), runID)
		require.NoError(t, err)
		return cond(run)
	}, 10*time.Second, 20*time.Millisecond)
	return run
}
