package server

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
	"strings"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"connectrpc.com/connect"
	statuspb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/anypb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// withTransportFaults is the outermost layer of the API, around Connect
// itself (edge.go). Some client mistakes are refused by Connect before any
// interceptor runs (an undecodable GET message, a truncated envelope, a
// corrupt compressed body); this layer makes those answers what every other
// error is:
//
//   - it gives the request its correlation id (the fault interceptor and the
//     body limits read it from the context) and sends it in
//     Weft-Correlation-Id on every answer;
//   - it refuses a Connect GET whose base64 message does not decode, as
//     invalid_argument naming the message parameter (Connect would answer
//     unknown, HTTP 500);
//   - it makes sure an error answer carries the weft.v1.Fault detail with the
//     correlation id, on Connect unary and Connect streaming with JSON (the
//     error's JSON, whose details' "debug" JSON it also renders with proto
//     field names), gRPC and gRPC-Web (the grpc-status-details-bin trailer).
//
// It also bounds the request: the raw body to rawMax bytes (0: unbounded,
// for the calls JSON-RPC forwards, whose envelope it bounded) and each
// message to maxBytes (limitBody). routes maps the API's procedure paths to
// their services' handlers; any other path is next's.
func withTransportFaults(next http.Handler, routes map[string]http.Handler, maxBytes, rawMax int64) http.Handler {
	return &edge{next: next, routes: routes, maxBytes: maxBytes, rawMax: rawMax}
}

// errorWriter writes an error in the protocol of the request it answers.
var errorWriter = connect.NewErrorWriter()

// RuleGETBase64 is the rule_id of the violation a Connect GET answers when
// its message parameter is not the base64 that base64=1 announces.
const RuleGETBase64 = "get.base64"

// RuleTimeoutHeader is the rule_id of the violation a request answers when its
// Connect-Timeout-Ms or Grpc-Timeout header is not the protocol's form.
const RuleTimeoutHeader = "header.timeout"

// checkTimeoutHeaders refuses a Connect-Timeout-Ms that is not 1 to 10 digits
// and a Grpc-Timeout that is not 1 to 8 digits and a unit (H M S m u n).
// Connect's own refusals quote the header; this one names it only.
func checkTimeoutHeaders(r *http.Request) error {
	bad := ""
	if v, ok := r.Header["Connect-Timeout-Ms"]; ok && !(len(v) == 1 && digits(v[0], 1, 10)) {
		bad = "Connect-Timeout-Ms must be 1 to 10 digits"
	}
	if v, ok := r.Header["Grpc-Timeout"]; ok && !(len(v) == 1 && len(v[0]) >= 2 &&
		strings.ContainsRune("HMSmun", rune(v[0][len(v[0])-1])) && digits(v[0][:len(v[0])-1], 1, 8)) {
		bad = "Grpc-Timeout must be 1 to 8 digits and a unit (H, M, S, m, u or n)"
	}
	if bad == "" {
		return nil
	}
	v := &validate.Violations{Violations: []*validate.Violation{violation(nil, RuleTimeoutHeader, bad)}}
	return newInvalidArgument(v, violationsText(v))
}

// digits reports whether s is between min and max ASCII digits long.
func digits(s string, min, max int) bool {
	if len(s) < min || len(s) > max {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// RuleGETEncoding is the rule_id of the violation a Connect GET answers when
// its encoding or compression parameter names nothing the server speaks.
const RuleGETEncoding = "get.encoding"

// getCodecs and getCompressions are what a Connect GET's encoding and
// compression parameters may name (the codecs and compressors of server.go
// and compression.go).
var (
	getCodecs       = map[string]bool{"json": true, "proto": true}
	getCompressions = map[string]bool{"": true, "identity": true, "gzip": true}
)

// checkGETMessage refuses a Connect GET whose encoding or compression
// parameter names no codec or compressor the server has (Connect's own
// refusal would quote the parameter), or whose base64 message parameter is
// not URL-safe base64 (padded or not), as Connect reads it.
func checkGETMessage(r *http.Request) error {
	if r.Method != http.MethodGet || r.URL.RawQuery == "" {
		return nil
	}
	q := r.URL.Query()
	if !q.Has("message") {
		return nil
	}
	if !getCodecs[q.Get("encoding")] || !getCompressions[q.Get("compression")] {
		v := &validate.Violations{Violations: []*validate.Violation{
			violation(nil, RuleGETEncoding, "the encoding query parameter must be json or proto, and compression, when set, identity or gzip")}}
		return newInvalidArgument(v, violationsText(v))
	}
	if q.Get("base64") != "1" {
		return nil
	}
	msg := q.Get("message")
	enc := base64.URLEncoding
	if len(msg)%4 != 0 {
		enc = base64.RawURLEncoding
	}
	if _, err := enc.DecodeString(msg); err != nil {
		v := &validate.Violations{Violations: []*validate.Violation{
			violation(nil, RuleGETBase64, "the message query parameter is not URL-safe base64")}}
		return newInvalidArgument(v, violationsText(v))
	}
	return nil
}

// faultWriter passes an answer through, holding back only a Connect unary
// error body (a few hundred bytes) to complete it, and completing gRPC's
// status details in the headers or trailers.
type faultWriter struct {
	http.ResponseWriter
	id        string
	committed bool
	held      bool // a Connect unary error body is being held back
	status    int
	body      bytes.Buffer
	stream    bool   // a Connect streaming answer: envelopes pass through endStreams
	grpc      bool   // a gRPC or gRPC-Web answer, whose trailers may carry a status
	partial   []byte // the bytes of an envelope not yet complete
}

// Unwrap lets http.ResponseController reach the connection.
func (w *faultWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

func (w *faultWriter) WriteHeader(status int) {
	if w.committed || w.held {
		return
	}
	h := w.Header()
	contentType := h.Get("Content-Type")
	if status != http.StatusOK && strings.HasPrefix(contentType, "application/json") && h.Get("Grpc-Status") == "" {
		w.held, w.status = true, status
		return
	}
	completeGRPCStatus(h, false, w.id)
	w.stream = strings.HasPrefix(contentType, "application/connect+")
	w.grpc = strings.HasPrefix(contentType, "application/grpc")
	w.committed = true
	w.ResponseWriter.WriteHeader(status)
}

func (w *faultWriter) Write(p []byte) (int, error) {
	if !w.committed && !w.held {
		w.WriteHeader(http.StatusOK)
	}
	switch {
	case w.held:
		return w.body.Write(p)
	case w.stream:
		return len(p), w.endStreams(p)
	}
	return w.ResponseWriter.Write(p)
}

// endStreams passes a Connect streaming answer's envelopes through,
// completing the error of its end-of-stream message (flag 0x02) as
// completeConnectError completes a unary one. An end-of-stream message Connect
// compressed (it compresses any message of compressMinBytes or more) is
// inflated and sent completed without compression, which the protocol allows
// per envelope.
func (w *faultWriter) endStreams(p []byte) error {
	w.partial = append(w.partial, p...)
	for len(w.partial) >= 5 {
		size := int(binary.BigEndian.Uint32(w.partial[1:5]))
		if len(w.partial) < 5+size {
			return nil
		}
		env := w.partial[:5+size]
		if flags := env[0]; flags&0x02 != 0 {
			if msg, ok := endStreamMessage(env, w.Header().Get("Connect-Content-Encoding")); ok {
				env = completeEndStream(msg, w.id)
			}
		}
		if _, err := w.ResponseWriter.Write(env); err != nil {
			return err
		}
		w.partial = w.partial[5+size:]
	}
	return nil
}

// maxEndStreamBytes bounds what an end-of-stream message may inflate to before
// it is completed: an error and its details are a few KiB at most.
const maxEndStreamBytes = 1 << 20

// endStreamMessage answers an end-of-stream envelope's message, inflated when
// its compressed flag is set; false when it cannot be read, so that the
// envelope passes through as Connect wrote it.
func endStreamMessage(env []byte, encoding string) ([]byte, bool) {
	if env[0]&0x01 == 0 {
		return env[5:], true
	}
	if encoding != "gzip" {
		return nil, false
	}
	r, err := gzip.NewReader(bytes.NewReader(env[5:]))
	if err != nil {
		return nil, false
	}
	msg, err := io.ReadAll(io.LimitReader(r, maxEndStreamBytes+1))
	if err != nil || len(msg) > maxEndStreamBytes {
		return nil, false
	}
	return msg, true
}

// completeEndStream answers a Connect end-of-stream message, enveloped, with
// its error completed.
func completeEndStream(msg []byte, id string) []byte {
	var end map[string]json.RawMessage
	if json.Unmarshal(msg, &end) == nil && len(end["error"]) > 0 {
		end["error"] = completeConnectError(end["error"], id)
		if out, err := json.Marshal(end); err == nil {
			msg = out
		}
	}
	env := make([]byte, 5, 5+len(msg))
	env[0] = 0x02
	binary.BigEndian.PutUint32(env[1:], uint32(len(msg)))
	return append(env, msg...)
}

// Flush implements http.Flusher, which Connect's streaming needs.
func (w *faultWriter) Flush() {
	if w.held {
		return
	}
	if !w.committed {
		w.WriteHeader(http.StatusOK)
	}
	if f, ok := w.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// finish sends a held error body, completed, and completes gRPC's trailers.
func (w *faultWriter) finish() {
	if len(w.partial) > 0 {
		_, _ = w.ResponseWriter.Write(w.partial) // a cut envelope, as Connect wrote it
	}
	if w.held {
		body := completeConnectError(w.body.Bytes(), w.id)
		h := w.Header()
		h.Del("Content-Length")
		h.Set("Content-Length", strconv.Itoa(len(body)))
		w.ResponseWriter.WriteHeader(w.status)
		_, _ = w.ResponseWriter.Write(body)
		return
	}
	if w.grpc || !w.committed {
		completeGRPCStatus(w.Header(), true, w.id)
	}
}

// wireDetail is one detail of a Connect error body.
type wireDetail struct {
	Type  string          `json:"type"`
	Value string          `json:"value"`
	Debug json.RawMessage `json:"debug,omitempty"`
}

// wireError is Connect's unary error body.
type wireError struct {
	Code    string          `json:"code"`
	Message string          `json:"message,omitempty"`
	Details []wireDetail    `json:"details,omitempty"`
	Meta    json.RawMessage `json:"metadata,omitempty"`
}

// completeConnectError answers a Connect unary error body with a Fault that
// carries the correlation id and every detail's debug JSON in proto field
// names. A body that is not a Connect error is answered as it is.
func completeConnectError(body []byte, id string) []byte {
	var we wireError
	if json.Unmarshal(body, &we) != nil || we.Code == "" {
		return body
	}
	var code connect.Code
	if code.UnmarshalText([]byte(we.Code)) != nil {
		return body
	}
	details := make([]*anypb.Any, 0, len(we.Details)+1)
	for _, d := range we.Details {
		raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(d.Value, "="))
		if err != nil {
			return body
		}
		details = append(details, &anypb.Any{TypeUrl: "type.googleapis.com/" + d.Type, Value: raw})
	}
	details = completeFault(details, code, id)
	we.Details = we.Details[:0]
	for _, a := range details {
		d := wireDetail{Type: strings.TrimPrefix(a.GetTypeUrl(), "type.googleapis.com/"),
			Value: base64.RawStdEncoding.EncodeToString(a.GetValue())}
		if m, err := a.UnmarshalNew(); err == nil {
			if debug, err := jsonMarshal.Marshal(m); err == nil {
				d.Debug = debug
			}
		}
		we.Details = append(we.Details, d)
	}
	out, err := json.Marshal(we)
	if err != nil {
		return body
	}
	return out
}

// The gRPC status headers, and as trailers (http.TrailerPrefix).
const (
	grpcStatus               = "Grpc-Status"
	grpcStatusDetails        = "Grpc-Status-Details-Bin"
	grpcMessage              = "Grpc-Message"
	trailerGRPCStatus        = http.TrailerPrefix + grpcStatus
	trailerGRPCStatusDetails = http.TrailerPrefix + grpcStatusDetails
	trailerGRPCMessage       = http.TrailerPrefix + grpcMessage
)

// completeGRPCStatus completes the grpc-status-details-bin of an error
// answer, in the headers or in the trailers.
func completeGRPCStatus(h http.Header, trailers bool, id string) {
	statusKey, detailsKey, messageKey := grpcStatus, grpcStatusDetails, grpcMessage
	if trailers {
		statusKey, detailsKey, messageKey = trailerGRPCStatus, trailerGRPCStatusDetails, trailerGRPCMessage
	}
	codeText := h.Get(statusKey)
	if codeText == "" || codeText == "0" {
		return
	}
	n, err := strconv.Atoi(codeText)
	if err != nil {
		return
	}
	st := &statuspb.Status{Code: int32(n)}
	if bin := h.Get(detailsKey); bin != "" {
		raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(bin, "="))
		if err != nil || proto.Unmarshal(raw, st) != nil {
			return
		}
	} else {
		st.Message = grpcPercentDecode(h.Get(messageKey))
	}
	st.Details = completeFault(st.GetDetails(), connect.Code(n), id)
	raw, err := proto.Marshal(st)
	if err != nil {
		return
	}
	h.Set(detailsKey, base64.RawStdEncoding.EncodeToString(raw))
}

// completeFault answers details with a weft.v1.Fault that carries the
// correlation id: the one present, completed, or a new one whose code
// follows the Connect code.
func completeFault(details []*anypb.Any, code connect.Code, id string) []*anypb.Any {
	faultName := (&weftv1.Fault{}).ProtoReflect().Descriptor().FullName()
	for i, d := range details {
		if d.MessageName() != faultName {
			continue
		}
		fault := &weftv1.Fault{}
		if d.UnmarshalTo(fault) != nil || fault.GetCorrelationId() == id {
			return details
		}
		fault.CorrelationId = id
		if a, err := anypb.New(fault); err == nil {
			details[i] = a
		}
		return details
	}
	if a, err := anypb.New(&weftv1.Fault{Code: faultCodeFor(code), CorrelationId: id}); err == nil {
		details = append(details, a)
	}
	return details
}

// grpcPercentDecode reverses gRPC's percent-encoding of grpc-message.
func grpcPercentDecode(s string) string {
	if !strings.Contains(s, "%") {
		return s
	}
	var out strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			if b, err := strconv.ParseUint(s[i+1:i+3], 16, 8); err == nil {
				out.WriteByte(byte(b))
				i += 2
				continue
			}
		}
		out.WriteByte(s[i])
	}
	return strings.ToValidUTF8(out.String(), "\uFFFD")
}
