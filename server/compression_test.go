package server

import (
	"bytes"
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
	url := testServer(t, engineConfig(t))
	b := &bundle{t: t, c: apitest.NewClients(url, twoProtocols[0])}
	enc, n := postJSON(t, url, "/weft.v1.RunService/ListRuns", `{}`)
	require.Empty(t, enc, "an empty list (%d bytes) must not be compressed", n)
	require.Less(t, n, compressMinBytes)
	for range 20 {
		b.submit(def(&weftv1.Action{Id: "a", Order: 1, Activity: "noop"}))
	}
	enc, _ = postJSON(t, url, "/weft.v1.RunService/ListRuns", `{}`)
	require.Equal(t, "gzip", enc, "twenty runs are more than compressMinBytes and must be compressed")
}
