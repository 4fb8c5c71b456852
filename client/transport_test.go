package client

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"
)

// countingConn counts the writes made on a connection.
type countingConn struct {
	net.Conn
	writes *atomic.Int32
}

func (c countingConn) Write(b []byte) (int, error) {
	c.writes.Add(1)
	return c.Conn.Write(b)
}

// streamBody is a request body net/http cannot tell is in memory, as
// Connect's is.
type streamBody struct{ io.Reader }

func (streamBody) Close() error { return nil }

func TestDefaultTransport_SendsARequestsHeaderAndBodyInOneWrite(t *testing.T) {
	t.Parallel()
	var got atomic.Value
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		got.Store(string(b))
	}))
	defer srv.Close()
	hc := defaultHTTPClient(nil)
	var writes atomic.Int32
	tr := hc.Transport.(oneWrite).next.(*http.Transport)
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		c, err := (&net.Dialer{}).DialContext(ctx, network, addr)
		return countingConn{Conn: c, writes: &writes}, err
	}
	for i := range 3 {
		body := strings.Repeat("x", 100+i)
		req, err := http.NewRequest(http.MethodPost, srv.URL, streamBody{strings.NewReader(body)})
		require.NoError(t, err)
		req.ContentLength = int64(len(body))
		res, err := hc.Do(req)
		require.NoError(t, err)
		_, _ = io.Copy(io.Discard, res.Body)
		_ = res.Body.Close()
		require.Equal(t, body, got.Load(), "the body arrives whole")
		require.Equal(t, int32(i+1), writes.Load(), "one write per request")
	}
}
