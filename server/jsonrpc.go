package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// JSONRPCPath is the JSON-RPC 2.0 endpoint.
const JSONRPCPath = "/jsonrpc"

// JSON-RPC 2.0's own error codes.
const (
	jsonrpcParseError     = -32700
	jsonrpcInvalidRequest = -32600
	jsonrpcMethodNotFound = -32601
	jsonrpcInvalidParams  = -32602
	jsonrpcInternal       = -32603
)

// MaxJSONRPCBatch is how many calls one JSON-RPC batch may hold.
const MaxJSONRPCBatch = 100

// jsonrpcHandler serves JSON-RPC 2.0 by forwarding each call in-process to
// the Connect handler of its procedure as a Connect unary JSON request, so
// that authentication, validation, faults, logging, metrics and limits apply
// exactly as they do to Connect, gRPC and gRPC-Web. It adds nothing of its
// own but the envelope.
type jsonrpcHandler struct {
	connect http.Handler
	methods map[string]bool // procedure -> streaming
	metrics *metrics
}

func newJSONRPCHandler(connectHandler http.Handler, m *metrics) *jsonrpcHandler {
	return &jsonrpcHandler{connect: connectHandler, methods: procedures(ServiceNames), metrics: m}
}

// procedures answers every method of the services as "pkg.Service/Method",
// true for streaming ones.
func procedures(services []string) map[string]bool {
	out := map[string]bool{}
	for _, name := range services {
		sd, ok := serviceDescriptor(name)
		if !ok {
			continue
		}
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i)
			out[name+"/"+string(md.Name())] = md.IsStreamingClient() || md.IsStreamingServer()
		}
	}
	return out
}

// rpcError is a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

// rpcResponse is a JSON-RPC response object. ID is the request's id as sent
// (null when it could not be read).
type rpcResponse struct {
	JSONRPC string          `json:"jsonrpc"`
	ID      json.RawMessage `json:"id"`
	Result  json.RawMessage `json:"result,omitempty"`
	Error   *rpcError       `json:"error,omitempty"`
}

var jsonNull = json.RawMessage("null")

func errorResponse(id json.RawMessage, code int, message string) *rpcResponse {
	if id == nil {
		id = jsonNull
	}
	return &rpcResponse{JSONRPC: "2.0", ID: id, Error: &rpcError{Code: code, Message: message}}
}

func (h *jsonrpcHandler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		http.Error(w, "JSON-RPC answers POST only", http.StatusMethodNotAllowed)
		return
	}
	if status, msg := h.checkEntity(r); status != 0 {
		h.metrics.jsonrpcReject.WithLabelValues("unsupported_media_type").Inc()
		writeRPC(w, status, errorResponse(nil, jsonrpcInvalidRequest, msg))
		return
	}
	body, err := io.ReadAll(r.Body)
	if err != nil {
		var tooBig *http.MaxBytesError
		if errors.As(err, &tooBig) {
			// The PAYLOAD_TOO_LARGE fault, as a forwarded call over the
			// message limit answers it, with the table's HTTP status.
			h.metrics.jsonrpcReject.WithLabelValues("too_large").Inc()
			refusal := withFault(newPayloadTooLarge("the request body", tooBig.Limit), CorrelationID(r.Context()))
			writeRPC(w, HTTPStatus(weftv1.FaultCode_FAULT_CODE_PAYLOAD_TOO_LARGE),
				&rpcResponse{JSONRPC: "2.0", ID: jsonNull, Error: rpcErrorOf(refusal)})
			return
		}
		http.Error(w, "reading the request body failed", http.StatusBadRequest)
		return
	}
	h.serveBody(w, r, body)
}

// checkEntity refuses bodies that are not plain JSON: another media type,
// or a content coding (JSON-RPC requests are small; compression is refused
// rather than inflated).
func (h *jsonrpcHandler) checkEntity(r *http.Request) (int, string) {
	media, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || media != "application/json" {
		return http.StatusUnsupportedMediaType, "Content-Type must be application/json"
	}
	if enc := r.Header.Get("Content-Encoding"); enc != "" && !strings.EqualFold(enc, "identity") {
		return http.StatusUnsupportedMediaType, "Content-Encoding must be identity"
	}
	return 0, ""
}

// serveBody answers one call or a batch.
func (h *jsonrpcHandler) serveBody(w http.ResponseWriter, r *http.Request, body []byte) {
	trimmed := bytes.TrimSpace(body)
	if !json.Valid(trimmed) {
		h.metrics.jsonrpcReject.WithLabelValues("parse_error").Inc()
		writeRPC(w, http.StatusOK, errorResponse(nil, jsonrpcParseError, "parse error: the body is not valid JSON"))
		return
	}
	if trimmed[0] != '[' {
		res, header := h.call(r, trimmed)
		if res == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		if id := header.Get(CorrelationHeader); id != "" {
			w.Header().Set(CorrelationHeader, id)
		}
		writeRPC(w, http.StatusOK, res)
		return
	}
	var batch []json.RawMessage
	if err := json.Unmarshal(trimmed, &batch); err != nil || len(batch) == 0 || len(batch) > MaxJSONRPCBatch {
		h.metrics.jsonrpcReject.WithLabelValues("invalid_request").Inc()
		msg := "invalid request: a batch must be an array of 1 to 100 calls"
		writeRPC(w, http.StatusOK, errorResponse(nil, jsonrpcInvalidRequest, msg))
		return
	}
	out := make([]*rpcResponse, 0, len(batch))
	for _, raw := range batch {
		if res, _ := h.call(r, raw); res != nil {
			out = append(out, res)
		}
	}
	if len(out) == 0 {
		w.WriteHeader(http.StatusNoContent)
		return
	}
	writeRPC(w, http.StatusOK, out)
}

// rpcCall is a decoded, checked JSON-RPC request.
type rpcCall struct {
	id           json.RawMessage
	notification bool
	procedure    string
	params       []byte
}

// call answers one JSON-RPC request, or nil for a notification. The header
// is that of the forwarded Connect response, if there was one.
func (h *jsonrpcHandler) call(r *http.Request, raw json.RawMessage) (*rpcResponse, http.Header) {
	c, fail := h.decode(raw, CorrelationID(r.Context()))
	if fail != nil {
		// A well-formed notification is never answered, even when its
		// method or params are wrong; a malformed request object always is.
		if c.notification && fail.Error.Code != jsonrpcInvalidRequest {
			return nil, nil
		}
		return fail, nil
	}
	res, header := h.forward(r, c)
	if c.notification {
		return nil, header
	}
	return res, header
}

// decode checks a request object against JSON-RPC 2.0 and the API's methods.
func (h *jsonrpcHandler) decode(raw json.RawMessage, correlationID string) (rpcCall, *rpcResponse) {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		h.metrics.jsonrpcReject.WithLabelValues("invalid_request").Inc()
		return rpcCall{}, errorResponse(nil, jsonrpcInvalidRequest, "invalid request: a call must be a JSON object")
	}
	c := rpcCall{}
	id, hasID := fields["id"]
	c.notification = !hasID
	if hasID {
		if !validID(id) {
			h.metrics.jsonrpcReject.WithLabelValues("invalid_request").Inc()
			return c, errorResponse(nil, jsonrpcInvalidRequest, "invalid request: id must be a string, a number or null")
		}
		c.id = id
	}
	var version, method string
	if json.Unmarshal(fields["jsonrpc"], &version) != nil || version != "2.0" {
		h.metrics.jsonrpcReject.WithLabelValues("invalid_request").Inc()
		return c, errorResponse(c.id, jsonrpcInvalidRequest, `invalid request: "jsonrpc" must be "2.0"`)
	}
	if json.Unmarshal(fields["method"], &method) != nil || method == "" {
		h.metrics.jsonrpcReject.WithLabelValues("invalid_request").Inc()
		return c, errorResponse(c.id, jsonrpcInvalidRequest, `invalid request: "method" must be a non-empty string`)
	}
	c.procedure = normaliseMethod(method)
	streaming, known := h.methods[c.procedure]
	switch {
	case !known:
		h.metrics.jsonrpcReject.WithLabelValues("method_not_found").Inc()
		return c, errorResponse(c.id, jsonrpcMethodNotFound,
			fmt.Sprintf("method not found: %.200q is not a weft.v1 method (use e.g. weft.v1.RunService/GetRun)", method))
	case streaming:
		h.metrics.jsonrpcReject.WithLabelValues("method_not_found").Inc()
		return c, errorResponse(c.id, jsonrpcMethodNotFound,
			c.procedure+" is a streaming method: JSON-RPC cannot carry it; use Connect or gRPC streaming")
	}
	params, ok := paramsOf(fields["params"])
	if !ok {
		// The request message is refused as a forwarded one would be: with
		// the Fault, the correlation id and the violation.
		v := &validate.Violations{Violations: []*validate.Violation{violation(nil, RuleJSONObject,
			"params must be an object (the request message in proto JSON)")}}
		refusal := withFault(newInvalidArgument(v, "invalid params: "+violationsText(v)), correlationID)
		return c, &rpcResponse{JSONRPC: "2.0", ID: c.idOrNull(), Error: rpcErrorFor(refusal.Code(), refusal.Message(), faultOfErr(refusal), v.GetViolations())}
	}
	c.params = params
	return c, nil
}

// validID accepts the id types JSON-RPC 2.0 allows: string, number, null.
func validID(id json.RawMessage) bool {
	var v any
	if json.Unmarshal(id, &v) != nil {
		return false
	}
	switch v.(type) {
	case string, float64, nil:
		return true
	}
	return false
}

// normaliseMethod accepts "weft.v1.RunService/GetRun", "/weft.v1.RunService/GetRun"
// and "weft.v1.RunService.GetRun".
func normaliseMethod(m string) string {
	m = strings.TrimPrefix(m, "/")
	if !strings.Contains(m, "/") {
		if i := strings.LastIndexByte(m, '.'); i > 0 {
			m = m[:i] + "/" + m[i+1:]
		}
	}
	return m
}

// paramsOf answers the params as a request body: an object as it is, absent
// or null as the empty message; positional (array) params are refused.
func paramsOf(raw json.RawMessage) ([]byte, bool) {
	raw = bytes.TrimSpace(raw)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, jsonNull):
		return []byte("{}"), true
	case raw[0] == '{':
		return raw, true
	}
	return nil, false
}

// forward runs the call through the Connect handler in-process and answers
// its result or its error.
func (h *jsonrpcHandler) forward(r *http.Request, c rpcCall) (*rpcResponse, http.Header) {
	ctx := context.WithValue(r.Context(), viaJSONRPCKey{}, true)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/"+c.procedure, bytes.NewReader(c.params))
	if err != nil {
		return errorResponse(c.id, jsonrpcInternal, "internal error"), nil
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Connect-Protocol-Version", "1")
	for _, k := range []string{"Authorization", "Connect-Timeout-Ms", "User-Agent"} {
		if v := r.Header.Get(k); v != "" {
			req.Header.Set(k, v)
		}
	}
	req.RemoteAddr = r.RemoteAddr
	rec := newBufferedResponse()
	h.connect.ServeHTTP(rec, req)
	if rec.status == http.StatusOK {
		return &rpcResponse{JSONRPC: "2.0", ID: c.idOrNull(), Result: json.RawMessage(rec.body.Bytes())}, rec.header
	}
	return &rpcResponse{JSONRPC: "2.0", ID: c.idOrNull(), Error: errorFromConnect(rec.status, rec.body.Bytes())}, rec.header
}

func (c rpcCall) idOrNull() json.RawMessage {
	if c.id == nil {
		return jsonNull
	}
	return c.id
}

// writeRPC writes a JSON-RPC answer.
func writeRPC(w http.ResponseWriter, status int, v any) {
	body, err := json.Marshal(v)
	if err != nil {
		http.Error(w, "internal error", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

// bufferedResponse is an in-memory http.ResponseWriter for forwarded calls.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newBufferedResponse() *bufferedResponse {
	return &bufferedResponse{header: http.Header{}}
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// Flush lets handlers that flush (Connect does) run unchanged.
func (b *bufferedResponse) Flush() {}
