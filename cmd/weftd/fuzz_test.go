package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/server"
	"github.com/weft-dev/weft/server/wiretest"
)

// The fuzz suite's bounds: make test runs it for defaultFuzzDuration with
// a fixed seed; make fuzz sets WEFT_FUZZ_DURATION (and WEFT_FUZZ_SEED).
const (
	defaultFuzzDuration = 20 * time.Second
	defaultFuzzSeed     = 20
	fuzzWorkers         = 2
	fuzzMarker          = "ZQMARKERQZ"
	maxFindings         = 20
)

// fuzzSettings reads the duration and seed from the environment.
func fuzzSettings(t *testing.T) (time.Duration, uint64) {
	duration, seed := defaultFuzzDuration, uint64(defaultFuzzSeed)
	if v := os.Getenv("WEFT_FUZZ_DURATION"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err, "WEFT_FUZZ_DURATION")
		duration = d
	}
	if v := os.Getenv("WEFT_FUZZ_SEED"); v != "" {
		s, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err, "WEFT_FUZZ_SEED")
		seed = s
	}
	if testing.Short() {
		duration = min(duration, 3*time.Second)
	}
	return duration, seed
}

// fuzzTally counts a fuzz run's requests and keeps its findings.
type fuzzTally struct {
	mu       sync.Mutex
	requests int
	failed   int
	timeouts int
	findings []string
}

func (f *fuzzTally) add(failed, timeout bool, finding string) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	if failed {
		f.failed++
	}
	if timeout {
		f.timeouts++
	}
	if finding != "" {
		f.findings = append(f.findings, finding)
	}
	return len(f.findings) < maxFindings
}

// TestWeftd_FuzzedRequestsNeverAnswerAServerErrorOrQuoteTheRequest sends
// random, truncated and mutated bodies to every method over every protocol
// of a real weftd: no answer is a 5xx, an internal or unknown code, or an
// error without the Fault and correlation id; no error quotes the marker
// planted in the request's payloads; weftd logs no ERROR and stays alive.
func TestWeftd_FuzzedRequestsNeverAnswerAServerErrorOrQuoteTheRequest(t *testing.T) {
	t.Parallel()
	duration, seed := fuzzSettings(t)
	d := testkit.StartWeftd(t, nil)
	methods, err := wiretest.Methods(server.ServiceNames)
	require.NoError(t, err)
	client := apitest.HTTPClient()
	tally := &fuzzTally{}
	deadline := time.Now().Add(duration)
	var wg sync.WaitGroup
	for w := range fuzzWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			fuzzWorker(d.URL, methods, seed+uint64(w), deadline, tally)
		}()
	}
	wg.Wait()
	t.Logf("seed %d, %s: %d requests, %d error answers, %d client timeouts (long polls)",
		seed, duration, tally.requests, tally.failed, tally.timeouts)
	require.Empty(t, tally.findings, "findings:\n%s", strings.Join(tally.findings, "\n"))
	res, err := client.Get(d.URL + "/healthz")
	require.NoError(t, err, "weftd is alive")
	require.NoError(t, res.Body.Close())
	require.Equal(t, http.StatusOK, res.StatusCode)
	logs := d.Logs()
	require.NotContains(t, logs, `"level":"ERROR"`, "a client mistake logged an ERROR")
	require.NotContains(t, logs, "panic")
	require.NotContains(t, logs, fuzzMarker, "the log quotes a request")
	require.Greater(t, tally.requests, 100, "the fuzz ran")
}

// fuzzWorker sends requests until the deadline.
func fuzzWorker(url string, methods []wiretest.Method, seed uint64, deadline time.Time, tally *fuzzTally) {
	g := wiretest.NewGenerator(seed, fuzzMarker)
	pick := rand.New(rand.NewPCG(seed, 7))
	for time.Now().Before(deadline) {
		m := methods[pick.IntN(len(methods))]
		p := fuzzProtocol(pick, m)
		body, wire := g.Body(m, p)
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		out, err := wiretest.Call(ctx, url, p, m.Procedure, wire)
		timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
		cancel()
		finding := ""
		switch {
		case err != nil && !timedOut:
			finding = fmt.Sprintf("%s %s: no answer: %v (wire %.120q)", p.Name, m.Procedure, err, wire)
		case err == nil:
			marker := fuzzMarker
			if wiretest.EchoAllowed(m, p, body, fuzzMarker) {
				marker = ""
			}
			if problem := out.Problem(marker); problem != "" {
				finding = fmt.Sprintf("%s %s: %s (wire %.120q)", p.Name, m.Procedure, problem, wire)
			}
		}
		if !tally.add(err == nil && out.Failed(), timedOut, finding) {
			return
		}
	}
}

// fuzzProtocol picks a protocol that can call m.
func fuzzProtocol(pick *rand.Rand, m wiretest.Method) wiretest.Protocol {
	for {
		p := wiretest.Protocols[pick.IntN(len(wiretest.Protocols))]
		switch {
		case m.Streaming && !p.Streaming, !m.Streaming && !p.Unary:
		case p == wiretest.ConnectGET || p == wiretest.ConnectGETJSON:
			if m.Idempotent {
				return p
			}
		default:
			return p
		}
	}
}
