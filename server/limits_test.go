package server

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"io"
	"net/http"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"google.golang.org/protobuf/types/known/structpb"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// gzipBomb answers a gzip stream of n members, each 1 MiB of zeros: about
// 1 KiB compressed per MiB decompressed.
func gzipBomb(t *testing.T, mib int) []byte {
	t.Helper()
	var member bytes.Buffer
	zw, err := gzip.NewWriterLevel(&member, gzip.BestCompression)
	require.NoError(t, err)
	_, err = zw.Write(make([]byte, 1<<20))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	return bytes.Repeat(member.Bytes(), mib)
}

// envelope frames a compressed message as Connect streaming and gRPC do.
func envelope(compressed []byte) []byte {
	out := make([]byte, 5, 5+len(compressed))
	out[0] = 1
	binary.BigEndian.PutUint32(out[1:], uint32(len(compressed)))
	return append(out, compressed...)
}

// TestCompressedBomb_IsRefusedWithoutA5xxOrInflating: a request that is
// small compressed and 1 GiB decompressed is refused with a 4xx (or the gRPC
// status invalid_argument with the PAYLOAD_TOO_LARGE fault) on every
// protocol that accepts compression,
// and the server never allocates anything near the decompressed size. It
// measures the process's allocations, so it does not run in parallel: the
// package's parallel tests start only once it has ended, and their
// allocations are not counted as the server's.
func TestCompressedBomb_IsRefusedWithoutA5xxOrInflating(t *testing.T) {
	url := testServer(t, engineConfig(t))
	bomb := gzipBomb(t, 1024)
	require.Less(t, len(bomb), DefaultMaxRequestBytes, "the bomb must pass the raw body limit")
	cases := []struct {
		name, path string
		header     http.Header
		body       []byte
		stream     string // "connect" or "grpc": the status travels after a 200
	}{
		{"ConnectUnaryContentEncoding", "/weft.v1.RunService/GetRun",
			http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}, bomb, ""},
		{"ConnectStreamingConnectContentEncoding", "/weft.v1.EventService/WatchEvents",
			http.Header{"Content-Type": {"application/connect+json"}, "Connect-Content-Encoding": {"gzip"}}, envelope(bomb), "connect"},
		{"GRPCEncoding", "/weft.v1.RunService/GetRun",
			http.Header{"Content-Type": {"application/grpc"}, "Grpc-Encoding": {"gzip"}, "Te": {"trailers"}}, envelope(bomb), "grpc"},
		{"JSONRPCContentEncoding", "/jsonrpc",
			http.Header{"Content-Type": {"application/json"}, "Content-Encoding": {"gzip"}}, bomb, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			runtime.GC()
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			req, err := http.NewRequest(http.MethodPost, url+tc.path, bytes.NewReader(tc.body))
			require.NoError(t, err)
			req.Header = tc.header
			res, err := apitest.HTTPClient().Do(req)
			require.NoError(t, err)
			payload, _ := io.ReadAll(res.Body)
			require.NoError(t, res.Body.Close())
			runtime.ReadMemStats(&after)

			switch tc.stream {
			case "connect":
				require.Equal(t, http.StatusOK, res.StatusCode)
				require.Contains(t, endStream(t, payload), `"code":"invalid_argument"`, "the end-stream message")
			case "grpc":
				require.Equal(t, http.StatusOK, res.StatusCode)
				status := res.Trailer.Get("Grpc-Status") + res.Header.Get("Grpc-Status")
				require.Equal(t, strconv.Itoa(int(connect.CodeInvalidArgument)), status)
			default:
				require.GreaterOrEqual(t, res.StatusCode, 400, "body: %.300s", payload)
				require.Less(t, res.StatusCode, 500, "body: %.300s", payload)
				if tc.path != "/jsonrpc" { // JSON-RPC accepts no compression at all
					require.Contains(t, string(payload), "is larger than", "the PAYLOAD_TOO_LARGE fault's message")
				}
			}
			allocated := after.TotalAlloc - before.TotalAlloc
			require.Less(t, allocated, uint64(64<<20), "the server inflated the bomb: %d bytes allocated", allocated)
		})
	}
}

// endStream answers the last enveloped message of a Connect stream, inflated.
func endStream(t *testing.T, payload []byte) string {
	t.Helper()
	var last []byte
	var flags byte
	for len(payload) >= 5 {
		n := binary.BigEndian.Uint32(payload[1:5])
		flags, last, payload = payload[0], payload[5:5+n], payload[5+n:]
	}
	if flags&1 != 0 {
		zr, err := gzip.NewReader(bytes.NewReader(last))
		require.NoError(t, err)
		last, err = io.ReadAll(zr)
		require.NoError(t, err)
	}
	return string(last)
}

// TestCappedGzip_StopsInflatingPastTheLimit: the decompressor hands out at
// most limit bytes of a bomb, then the PAYLOAD_TOO_LARGE fault, instead of
// inflating the rest; a message of exactly the limit inflates whole.
func TestCappedGzip_StopsInflatingPastTheLimit(t *testing.T) {
	t.Parallel()
	r := &cappedGzipReader{limit: 4096}
	require.NoError(t, r.Reset(bytes.NewReader(gzipBomb(t, 64))))
	n, err := io.Copy(io.Discard, r)
	require.Equal(t, int64(4096), n)
	var cerr *connect.Error
	require.ErrorAs(t, err, &cerr)
	require.Equal(t, connect.CodeInvalidArgument, cerr.Code())
	require.Contains(t, cerr.Message(), "larger than 4096 bytes")

	for _, limit := range []int64{1 << 20, 2 << 20} {
		r = &cappedGzipReader{limit: limit}
		require.NoError(t, r.Reset(bytes.NewReader(gzipBomb(t, 1))))
		n, err = io.Copy(io.Discard, r)
		require.NoError(t, err, "limit %d", limit)
		require.Equal(t, int64(1<<20), n, "a message within the limit inflates whole")
	}
}

// TestGzipRequests_WithinTheLimitAreServed: the bounded codec still serves
// ordinary compressed calls on every protocol.
func TestGzipRequests_WithinTheLimitAreServed(t *testing.T) {
	t.Parallel()
	url := testServer(t, engineConfig(t))
	for _, p := range apitest.Protocols {
		t.Run(p.Name, func(t *testing.T) {
			p.Options = append(append([]connect.ClientOption{}, p.Options...), connect.WithSendGzip())
			c := apitest.NewClients(url, p)
			res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{
				Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x", Input: structpb.NewStringValue(strings.Repeat("z", 64<<10))})}))
			require.NoError(t, err)
			require.NotEmpty(t, res.Msg.GetRun().GetRunId())
		})
	}
}
