package server

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// postJSON posts a Connect unary JSON call accepting gzip, and answers the
// response's Content-Encoding and its raw length.
func postJSON(t *testing.T, url, procedure, body string) (string, int) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url+procedure, bytes.NewReader([]byte(body)))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	tr := apitest.HTTPClient().Transport.(*http.Transport).Clone()
	tr.DisableCompression = true // keep the body as sent
	res, err := (&http.Client{Transport: tr}).Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "%.300s", raw)
	return res.Header.Get("Content-Encoding"), len(raw)
}

// Answers below compressMinBytes go uncompressed even to a client that
// accepts gzip (a compressor per small message cost more CPU than anything
// else weftd did); larger answers are still compressed.
func TestCompression_OnlyAnswersOfAtLeastCompressMinBytes(t *testing.T) {
	t.Parallel()
	url := testServer(t, engineConfig(t))
	b := &bundle{t: t, c: apitest.NewClients(url, twoProtocols[0])}
	enc, n := postJSON(t, url, "/weft.v1.RunService/ListRuns", `{}`)
	require.Empty(t, enc, "an empty list (%d bytes) must not be compressed", n)
	require.Less(t, n, compressMinBytes)
	for range 40 {
		b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "noop"}))
	}
	enc, n = postJSON(t, url, "/weft.v1.RunService/ListRuns", `{"page_size": 1000}`)
	require.Equal(t, "gzip", enc, "forty runs are more than compressMinBytes and must be compressed")
	require.Less(t, n, compressMinBytes, "and compress well")
}

// The Run a client awaits, of a few steps, is below compressMinBytes (in
// JSON, the larger encoding): it goes uncompressed.
func TestCompression_ARunOfAFewStepsGoesUncompressed(t *testing.T) {
	t.Parallel()
	url := testServer(t, engineConfig(t))
	b := &bundle{t: t, c: apitest.NewClients(url, twoProtocols[0])}
	var actions []*weftv1.Action
	for i := range 5 {
		actions = append(actions, &weftv1.Action{Id: fmt.Sprintf("step-%d", i+1), Order: uint32(i + 1), Activity: "bench.noop"})
	}
	run := b.submit(def(actions...))
	for range 5 {
		b.complete(b.poll("bench.noop"))
	}
	enc, n := postJSON(t, url, "/weft.v1.RunService/GetRun", `{"run_id": "`+run.GetRunId()+`"}`)
	require.Empty(t, enc, "a five-step run (%d bytes) must not be compressed", n)
	t.Logf("a five-step run: %d bytes of JSON", n)
}
