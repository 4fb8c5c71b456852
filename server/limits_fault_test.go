package server

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/encoding/protowire"
	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

const testLimit = 4096

var payloadTooLarge = weftv1.FaultCode_FAULT_CODE_PAYLOAD_TOO_LARGE

// fixedProto is a client codec that sends fixed bytes as the binary request
// message, so a test controls its exact size.
type fixedProto struct{ body []byte }

func (c fixedProto) Name() string                    { return "proto" }
func (c fixedProto) Marshal(any) ([]byte, error)     { return c.body, nil }
func (c fixedProto) Unmarshal(b []byte, m any) error { return proto.Unmarshal(b, m.(proto.Message)) }

// getRunOfSize answers a GetRunRequest for run "r" padded to exactly size
// bytes, as the codec of protocol p encodes it: JSON padded with spaces,
// binary with an unknown field (ignored, as a newer client's would be).
func getRunOfSize(t *testing.T, p apitest.Protocol, size int) connect.ClientOption {
	t.Helper()
	if p.Name == "connect+json" {
		body := `{"run_id":"r"}`
		return connect.WithCodec(fixedJSON{body + strings.Repeat(" ", size-len(body))})
	}
	base, err := proto.Marshal(&weftv1.GetRunRequest{RunId: "r"})
	require.NoError(t, err)
	for pad := 0; pad < size; pad++ {
		b := protowire.AppendTag(append([]byte(nil), base...), 1000, protowire.BytesType)
		b = protowire.AppendBytes(b, make([]byte, pad))
		if len(b) == size {
			return connect.WithCodec(fixedProto{b})
		}
	}
	t.Fatalf("no padding makes %d bytes", size)
	return nil
}

// TestRequestSizeLimit_ServesExactlyTheLimitAndRefusesOneByteMore: on every
// protocol a message of MaxRequestBytes reaches the handler (run "r" is not
// found) and one of MaxRequestBytes+1 answers the PAYLOAD_TOO_LARGE fault
// with the Connect/gRPC code the fault table gives it.
func TestRequestSizeLimit_ServesExactlyTheLimitAndRefusesOneByteMore(t *testing.T) {
	t.Parallel()
	cfg := engineConfig(t)
	cfg.MaxRequestBytes = testLimit
	url := testServer(t, cfg)
	for _, p := range apitest.Protocols {
		t.Run(p.Name, func(t *testing.T) {
			for size, want := range map[int]weftv1.FaultCode{
				testLimit:     weftv1.FaultCode_FAULT_CODE_NOT_FOUND,
				testLimit + 1: payloadTooLarge,
			} {
				opts := append(append([]connect.ClientOption{}, p.Options...), getRunOfSize(t, p, size))
				client := weftv1connect.NewRunServiceClient(apitest.HTTPClient(), url, opts...)
				_, err := client.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{}))
				require.Equal(t, ConnectCode(want), connect.CodeOf(err), "size %d: %v", size, err)
				fault, ok := FaultOf(err)
				require.True(t, ok, "size %d: no Fault detail on %v", size, err)
				require.Equal(t, want, fault.GetCode(), "size %d", size)
			}
		})
	}
}

// TestOversizeMessage_AnswersPayloadTooLargeOnEveryProtocol: a request over
// the limit answers the PAYLOAD_TOO_LARGE fault on unary and streaming
// calls over Connect, gRPC and gRPC-Web, with the table's code; never
// resource_exhausted, which tells a client to retry the same request later.
func TestOversizeMessage_AnswersPayloadTooLargeOnEveryProtocol(t *testing.T) {
	t.Parallel()
	cfg := engineConfig(t)
	cfg.MaxRequestBytes = testLimit
	url := testServer(t, cfg)
	big := strings.Repeat("x", 2*testLimit)
	for _, p := range apitest.Protocols {
		t.Run(p.Name, func(t *testing.T) {
			c := apitest.NewClients(url, p)
			calls := map[string]func() error{
				"Unary": func() error {
					_, err := c.Runs.GetRun(context.Background(), connect.NewRequest(&weftv1.GetRunRequest{RunId: big}))
					return err
				},
				"ServerStream": func() error {
					stream, err := c.Events.WatchEvents(context.Background(), connect.NewRequest(&weftv1.WatchEventsRequest{RunId: big}))
					if err != nil {
						return err
					}
					defer stream.Close()
					require.False(t, stream.Receive())
					return stream.Err()
				},
			}
			for name, call := range calls {
				err := call()
				require.Equal(t, ConnectCode(payloadTooLarge), connect.CodeOf(err), "%s: %v", name, err)
				fault, ok := FaultOf(err)
				require.True(t, ok, "%s: no Fault detail on %v", name, err)
				require.Equal(t, payloadTooLarge, fault.GetCode(), name)
			}
		})
	}
}

// TestOversizeRequest_AgreesWithTheFaultTableOverHTTPAndJSONRPC: the HTTP
// status of Connect's HTTP/JSON and the JSON-RPC code (and HTTP status, for
// a body JSON-RPC refuses itself) are the table's for PAYLOAD_TOO_LARGE,
// and every answer carries the Fault.
func TestOversizeRequest_AgreesWithTheFaultTableOverHTTPAndJSONRPC(t *testing.T) {
	t.Parallel()
	cfg := engineConfig(t)
	cfg.MaxRequestBytes = testLimit
	url := testServer(t, cfg)
	big := strings.Repeat("x", 2*testLimit)

	t.Run("ConnectHTTPJSON", func(t *testing.T) {
		res, err := apitest.HTTPClient().Post(url+"/weft.v1.RunService/GetRun", "application/json",
			strings.NewReader(`{"run_id":"`+big+`"}`))
		require.NoError(t, err)
		payload, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		require.NoError(t, res.Body.Close())
		require.Equal(t, HTTPStatus(payloadTooLarge), res.StatusCode, "body: %s", payload)
		var ce connectErrorBody
		require.NoError(t, json.Unmarshal(payload, &ce))
		require.Equal(t, ConnectCode(payloadTooLarge).String(), ce.Code)
		fault, _ := detailsOf(ce)
		require.Equal(t, payloadTooLarge, fault.GetCode())
	})
	t.Run("JSONRPCForwardedCall", func(t *testing.T) {
		res := apitest.CallJSONRPC(t, url, 7, "weft.v1.RunService/GetRun", map[string]string{"run_id": big}, nil)
		require.NotNil(t, res.Error)
		require.Equal(t, JSONRPCCode(payloadTooLarge), res.Error.Code)
		require.Equal(t, ConnectCode(payloadTooLarge).String(), res.Error.Data.ConnectCode)
		require.Equal(t, payloadTooLarge, res.Fault(t).GetCode())
	})
	t.Run("JSONRPCBody", func(t *testing.T) {
		body := []byte(`{"jsonrpc":"2.0","id":1,"method":"weft.v1.RunService/GetRun","params":{"run_id":"` +
			strings.Repeat("x", testLimit+128<<10) + `"}}`)
		status, payload := apitest.PostJSONRPC(t, url, body, nil)
		require.Equal(t, HTTPStatus(payloadTooLarge), status, "body: %.300s", payload)
		var res apitest.JSONRPCResponse
		require.NoError(t, json.Unmarshal(payload, &res), "body: %.300s", payload)
		require.NotNil(t, res.Error)
		require.JSONEq(t, "null", string(res.ID))
		require.Equal(t, JSONRPCCode(payloadTooLarge), res.Error.Code)
		require.Equal(t, ConnectCode(payloadTooLarge).String(), res.Error.Data.ConnectCode)
		require.Equal(t, payloadTooLarge, res.Fault(t).GetCode())
	})
}

// requireTooLarge asserts err is the PAYLOAD_TOO_LARGE refusal.
func requireTooLarge(t *testing.T, err error) {
	t.Helper()
	fault, ok := FaultOf(err)
	require.True(t, ok, "not a fault: %v", err)
	require.Equal(t, payloadTooLarge, fault.GetCode())
}

// TestUnaryLimit_HandsOutTheLimitAndRefusesOneByteMore: the reader's own
// boundary, independent of Connect's buffering.
func TestUnaryLimit_HandsOutTheLimitAndRefusesOneByteMore(t *testing.T) {
	t.Parallel()
	read := func(n int) ([]byte, error) {
		return io.ReadAll(&unaryLimit{body: io.NopCloser(bytes.NewReader(make([]byte, n))), limit: 10, remaining: 10})
	}
	got, err := read(10)
	require.NoError(t, err)
	require.Len(t, got, 10)
	got, err = read(11)
	requireTooLarge(t, err)
	require.Len(t, got, 10)

	over := &unaryLimit{body: http.MaxBytesReader(nil, io.NopCloser(bytes.NewReader(make([]byte, 20))), 5), limit: 10, remaining: 10}
	_, err = io.ReadAll(over)
	requireTooLarge(t, err) // the outer raw-body limit answers the same fault
}

// frames answers enveloped messages of the given sizes.
func frames(sizes ...int) []byte {
	var out []byte
	for _, n := range sizes {
		prefix := make([]byte, 5)
		binary.BigEndian.PutUint32(prefix[1:], uint32(n))
		out = append(append(out, prefix...), bytes.Repeat([]byte{'m'}, n)...)
	}
	return out
}

// TestFrameLimit_PassesEnvelopesUpToTheLimitAndRefusesTheFirstOverIt: each
// envelope is judged by the length its prefix declares, before its bytes
// are read; envelopes within the limit pass unchanged, whatever the read
// sizes; a truncated prefix is refused as a malformed envelope.
func TestFrameLimit_PassesEnvelopesUpToTheLimitAndRefusesTheFirstOverIt(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name      string
		body      []byte
		passed    int // bytes handed out before the outcome
		tooLarge  bool
		malformed bool
	}{
		{"Empty", nil, 0, false, false},
		{"OneAtTheLimit", frames(10), 15, false, false},
		{"SeveralWithin", frames(0, 3, 10), 28, false, false},
		{"OneOver", frames(11), 0, true, false},
		{"SecondOver", frames(4, 11), 9, true, false},
		{"TruncatedPrefix", frames(4)[:3], 0, false, true},
		{"TruncatedMessage", frames(4)[:7], 7, false, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, chunk := range []int{1, 2, 7, 4096} {
				f := &frameLimit{body: io.NopCloser(bytes.NewReader(tc.body)), limit: 10}
				var got []byte
				buf := make([]byte, chunk)
				var err error
				for {
					var n int
					n, err = f.Read(buf)
					got = append(got, buf[:n]...)
					if err != nil {
						break
					}
				}
				require.Equal(t, string(tc.body[:tc.passed]), string(got), "chunk %d", chunk)
				if tc.tooLarge {
					requireTooLarge(t, err)
					continue
				}
				if tc.malformed {
					require.Equal(t, connect.CodeInvalidArgument, connect.CodeOf(err), "chunk %d: %v", chunk, err)
					continue
				}
				require.True(t, errors.Is(err, io.EOF), "chunk %d: %v", chunk, err)
			}
		})
	}
}
