// Package wiretest sends raw request bodies to a Weft server over each of
// its protocols and reads what came back, as a client that does not use
// Connect's own client would: the tests of malformed requests and the fuzz
// suite use it to send bytes no well-behaved client sends.
//
// It may import gen/, connect-go and the standard library; only tests
// import it.
package wiretest

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"connectrpc.com/connect"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// Protocol is one way of carrying a request body to a procedure.
type Protocol struct {
	// Name names the protocol in test names and findings.
	Name string
	// JSON says the body is proto JSON (otherwise binary protobuf).
	JSON bool
	// Enveloped says the wire carries the body in 5-byte-prefixed envelopes.
	Enveloped bool
	// Unary and Streaming say which methods the protocol can call.
	Unary, Streaming bool
	kind             string
	gzip             bool // the body is sent gzip-compressed (Content-Encoding)
}

// The protocols weftd serves. ConnectGET works for the reads marked free of
// side effects; JSONRPC for unary methods.
var (
	ConnectJSON    = Protocol{Name: "connect-json", JSON: true, Unary: true, kind: "connect"}
	ConnectProto   = Protocol{Name: "connect-proto", Unary: true, kind: "connect"}
	ConnectGzip    = Protocol{Name: "connect-json-gzip", JSON: true, Unary: true, kind: "connect", gzip: true}
	ConnectGET     = Protocol{Name: "connect-get", Unary: true, kind: "get"}
	ConnectGETJSON = Protocol{Name: "connect-get-json", JSON: true, Unary: true, kind: "get"}
	ConnectStream  = Protocol{Name: "connect-stream-json", JSON: true, Enveloped: true, Unary: false, Streaming: true, kind: "connect-stream"}
	GRPC           = Protocol{Name: "grpc", Enveloped: true, Unary: true, Streaming: true, kind: "grpc"}
	GRPCJSON       = Protocol{Name: "grpc-json", JSON: true, Enveloped: true, Unary: true, Streaming: true, kind: "grpc"}
	GRPCWeb        = Protocol{Name: "grpc-web", Enveloped: true, Unary: true, Streaming: true, kind: "grpc-web"}
	JSONRPC        = Protocol{Name: "jsonrpc", JSON: true, Unary: true, kind: "jsonrpc"}
)

// Protocols lists every protocol.
var Protocols = []Protocol{ConnectJSON, ConnectProto, ConnectGzip, ConnectGET, ConnectGETJSON, ConnectStream, GRPC, GRPCJSON, GRPCWeb, JSONRPC}

// Outcome is what a server answered.
type Outcome struct {
	// HTTPStatus is the HTTP status of the answer.
	HTTPStatus int
	// Code is the Connect or gRPC code ("ok" for success), or for JSON-RPC
	// the code of the JSON-RPC error ("" for a result).
	Code string
	// JSONRPCCode is a JSON-RPC error's code.
	JSONRPCCode int
	// Fault is the error's weft.v1.Fault detail, if it has one.
	Fault *weftv1.Fault
	// Message is the error's message.
	Message string
	// Raw is every byte of the answer: headers, body and trailers.
	Raw []byte
}

// Envelope prefixes body with a 5-byte envelope prefix (flags 0).
func Envelope(body []byte) []byte {
	out := make([]byte, 5, 5+len(body))
	binary.BigEndian.PutUint32(out[1:], uint32(len(body)))
	return append(out, body...)
}

// Request builds the HTTP request that carries wire (the body as the
// protocol sends it: enveloped already where the protocol envelopes) to
// procedure ("weft.v1.RunService/GetRun").
func Request(ctx context.Context, baseURL string, p Protocol, procedure string, wire []byte) (*http.Request, error) {
	codec := "proto"
	if p.JSON {
		codec = "json"
	}
	target := baseURL + "/" + procedure
	method, contentType := http.MethodPost, ""
	body := wire
	switch p.kind {
	case "connect":
		contentType = "application/" + codec
	case "get":
		method, body = http.MethodGet, nil
		q := url.Values{"encoding": {codec}, "message": {base64.RawURLEncoding.EncodeToString(wire)}, "base64": {"1"}, "connect": {"v1"}}
		target += "?" + q.Encode()
	case "connect-stream":
		contentType = "application/connect+" + codec
	case "grpc":
		contentType = "application/grpc+" + codec
	case "grpc-web":
		contentType = "application/grpc-web+" + codec
	case "jsonrpc":
		target = baseURL + "/jsonrpc"
		contentType = "application/json"
		body = []byte(`{"jsonrpc":"2.0","id":1,"method":` + strconv.Quote(procedure) + `,"params":` + string(wire) + `}`)
	}
	if p.gzip {
		var zipped bytes.Buffer
		zw := gzip.NewWriter(&zipped)
		_, _ = zw.Write(body)
		_ = zw.Close()
		body = zipped.Bytes()
	}
	req, err := http.NewRequestWithContext(ctx, method, target, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	if p.gzip {
		req.Header.Set("Content-Encoding", "gzip")
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if p.kind == "connect" {
		req.Header.Set("Connect-Protocol-Version", "1")
	}
	if p.kind == "grpc" {
		req.Header.Set("Te", "trailers")
	}
	return req, nil
}

// The clients Call uses: gRPC over HTTP/2 without TLS (prior knowledge), as
// gRPC clients speak it; everything else over HTTP/1.1.
var (
	http1Client = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 16}}
	h2cClient   = func() *http.Client {
		p := new(http.Protocols)
		p.SetUnencryptedHTTP2(true)
		return &http.Client{Transport: &http.Transport{Protocols: p}}
	}()
)

// Call sends wire to procedure over p and reads the answer.
func Call(ctx context.Context, baseURL string, p Protocol, procedure string, wire []byte) (Outcome, error) {
	req, err := Request(ctx, baseURL, p, procedure, wire)
	if err != nil {
		return Outcome{}, err
	}
	return Do(req, p)
}

// Do sends a request Request built (its headers changed, perhaps) and reads
// the answer as p's.
func Do(req *http.Request, p Protocol) (Outcome, error) {
	client := http1Client
	if p.kind == "grpc" {
		client = h2cClient
	}
	res, err := client.Do(req)
	if err != nil {
		return Outcome{}, err
	}
	defer func() { _ = res.Body.Close() }()
	body, err := io.ReadAll(res.Body)
	if err != nil {
		return Outcome{}, err
	}
	out := Outcome{HTTPStatus: res.StatusCode}
	var raw bytes.Buffer
	_ = res.Header.Write(&raw)
	raw.Write(body)
	_ = res.Trailer.Write(&raw)
	out.Raw = raw.Bytes()
	switch p.kind {
	case "connect", "get":
		readConnectUnary(&out, res, body)
	case "connect-stream":
		readConnectStream(&out, body)
	case "grpc":
		readGRPCStatus(&out, res.Trailer, res.Header)
	case "grpc-web":
		readGRPCWeb(&out, res.Header, body)
	case "jsonrpc":
		readJSONRPC(&out, body)
	}
	return out, nil
}

// connectError is Connect's JSON error.
type connectError struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details []struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"details"`
}

func (ce connectError) fill(out *Outcome) {
	out.Code, out.Message = ce.Code, ce.Message
	for _, d := range ce.Details {
		if d.Type != "weft.v1.Fault" {
			continue
		}
		b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(d.Value, "="))
		f := &weftv1.Fault{}
		if err == nil && proto.Unmarshal(b, f) == nil {
			out.Fault = f
		}
	}
}

func readConnectUnary(out *Outcome, res *http.Response, body []byte) {
	if res.StatusCode == http.StatusOK {
		out.Code = "ok"
		return
	}
	var ce connectError
	if json.Unmarshal(body, &ce) == nil && ce.Code != "" {
		ce.fill(out)
	}
}

func readConnectStream(out *Outcome, body []byte) {
	out.Code = "ok"
	for len(body) >= 5 {
		n := int(binary.BigEndian.Uint32(body[1:5]))
		if len(body) < 5+n {
			out.Code = "truncated answer"
			return
		}
		flags, msg := body[0], body[5:5+n]
		body = body[5+n:]
		if flags&0x02 == 0 {
			continue
		}
		var end struct {
			Error *connectError `json:"error"`
		}
		if json.Unmarshal(msg, &end) == nil && end.Error != nil {
			end.Error.fill(out)
		}
	}
}

func readGRPCStatus(out *Outcome, sources ...http.Header) {
	for _, h := range sources {
		code := h.Get("Grpc-Status")
		if code == "" {
			continue
		}
		n, err := strconv.Atoi(code)
		if err != nil {
			out.Code = "unparsable grpc-status " + strconv.Quote(code)
			return
		}
		if n == 0 {
			out.Code = "ok"
			return
		}
		out.Code = connect.Code(n).String()
		out.Message = h.Get("Grpc-Message")
		b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(h.Get("Grpc-Status-Details-Bin"), "="))
		st := &statuspb.Status{}
		if err != nil || proto.Unmarshal(b, st) != nil {
			return
		}
		out.Fault = faultOf(st.GetDetails())
		return
	}
	out.Code = "no grpc-status"
}

func faultOf(details []*anypb.Any) *weftv1.Fault {
	for _, d := range details {
		f := &weftv1.Fault{}
		if d.MessageName() == f.ProtoReflect().Descriptor().FullName() && d.UnmarshalTo(f) == nil {
			return f
		}
	}
	return nil
}

func readGRPCWeb(out *Outcome, header http.Header, body []byte) {
	if header.Get("Grpc-Status") != "" {
		readGRPCStatus(out, header)
		return
	}
	for len(body) >= 5 {
		n := int(binary.BigEndian.Uint32(body[1:5]))
		if len(body) < 5+n {
			break
		}
		flags, msg := body[0], body[5:5+n]
		body = body[5+n:]
		if flags&0x80 == 0 {
			continue
		}
		trailer := http.Header{}
		for _, line := range strings.Split(string(msg), "\r\n") {
			if k, v, ok := strings.Cut(line, ":"); ok {
				trailer.Add(strings.TrimSpace(k), strings.TrimSpace(v))
			}
		}
		readGRPCStatus(out, trailer)
		return
	}
	out.Code = "no grpc-status"
}

func readJSONRPC(out *Outcome, body []byte) {
	var res struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
			Data    struct {
				ConnectCode string          `json:"connect_code"`
				Fault       json.RawMessage `json:"fault"`
			} `json:"data"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &res) != nil {
		out.Code = "unparsable JSON-RPC answer"
		return
	}
	if res.Error == nil {
		return
	}
	out.JSONRPCCode, out.Message = res.Error.Code, res.Error.Message
	out.Code = res.Error.Data.ConnectCode
	if len(res.Error.Data.Fault) > 0 {
		f := &weftv1.Fault{}
		if protojsonUnmarshal(res.Error.Data.Fault, f) == nil {
			out.Fault = f
		}
	}
}

var protojsonUnmarshal = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal

// Failed reports whether the outcome is an error answer.
func (o Outcome) Failed() bool {
	return o.HTTPStatus >= 400 || o.JSONRPCCode != 0 || (o.Code != "" && o.Code != "ok")
}

// Problem answers what is wrong with an outcome for a client mistake, or
// "": a 5xx, an internal or unknown code, a JSON-RPC internal error, an
// error without a Fault and correlation id (JSON-RPC's own envelope errors,
// which reach no procedure, excepted), or an error that quotes marker
// anywhere ("" checks no marker).
func (o Outcome) Problem(marker string) string {
	switch {
	case o.HTTPStatus >= 500:
		return fmt.Sprintf("HTTP %d (%s: %.200s)", o.HTTPStatus, o.Code, o.Message)
	case o.Code == "internal" || o.Code == "unknown" || strings.HasPrefix(o.Code, "no ") || strings.HasPrefix(o.Code, "unparsable") || o.Code == "truncated answer":
		return fmt.Sprintf("code %s (%.200s)", o.Code, o.Message)
	case o.JSONRPCCode == -32603:
		return "JSON-RPC internal error"
	case marker != "" && o.Failed() && bytes.Contains(o.Raw, []byte(marker)):
		return "the answer quotes the request (marker echoed)"
	}
	if o.Code != "ok" && o.Code != "" && (o.Fault == nil || len(o.Fault.GetCorrelationId()) != 36) {
		return fmt.Sprintf("error %s without a Fault and correlation id (%.200s)", o.Code, o.Message)
	}
	return ""
}
