package server

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// connectErrorBody is Connect's unary JSON error body.
type connectErrorBody struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	Details []struct {
		Type  string `json:"type"`
		Value string `json:"value"`
	} `json:"details"`
}

// rpcErrorData is the data member of every JSON-RPC error Weft answers for
// a call that reached a procedure: the Connect code, the Fault and any field
// violations, each in proto JSON with proto field names.
type rpcErrorData struct {
	ConnectCode string            `json:"connect_code"`
	Fault       json.RawMessage   `json:"fault"`
	Violations  []json.RawMessage `json:"violations,omitempty"`
}

// errorFromConnect translates a forwarded call's Connect error into a
// JSON-RPC error whose code is the fault's (server/fault.go's table).
func errorFromConnect(status int, body []byte) *rpcError {
	var ce connectErrorBody
	if json.Unmarshal(body, &ce) != nil || ce.Code == "" {
		// Not a Connect error body: judge by the status alone.
		if status >= 400 && status < 500 {
			return &rpcError{Code: jsonrpcInvalidRequest, Message: http.StatusText(status)}
		}
		return &rpcError{Code: jsonrpcInternal, Message: "internal error"}
	}
	var code connect.Code
	if code.UnmarshalText([]byte(ce.Code)) != nil {
		code = connect.CodeUnknown
	}
	fault, violations := detailsOf(ce)
	return rpcErrorFor(code, ce.Message, fault, violations)
}

// rpcErrorOf translates a Connect error the JSON-RPC handler raises itself,
// before any procedure runs, as errorFromConnect translates a forwarded one.
func rpcErrorOf(cerr *connect.Error) *rpcError {
	fault, _ := FaultOf(cerr)
	return rpcErrorFor(cerr.Code(), cerr.Message(), fault, nil)
}

// faultOfErr answers the Fault detail of err, or nil.
func faultOfErr(err error) *weftv1.Fault {
	f, _ := FaultOf(err)
	return f
}

// rpcErrorFor is the JSON-RPC error of a Connect error: its code is the
// fault's (server/fault.go's table), its data the Connect code, the Fault
// and the violations.
func rpcErrorFor(code connect.Code, message string, fault *weftv1.Fault, violations []*validate.Violation) *rpcError {
	if fault == nil {
		// Refused before the interceptors ran (an undecodable message):
		// the Connect code decides.
		fault = &weftv1.Fault{Code: faultCodeFor(code)}
	}
	data := rpcErrorData{ConnectCode: code.String(), Fault: mustProtoJSON(fault)}
	for _, v := range violations {
		data.Violations = append(data.Violations, mustProtoJSON(v))
	}
	return &rpcError{Code: JSONRPCCode(fault.GetCode()), Message: message, Data: data}
}

// detailsOf decodes the Fault and Violations details of a Connect error body.
func detailsOf(ce connectErrorBody) (*weftv1.Fault, []*validate.Violation) {
	var fault *weftv1.Fault
	var violations []*validate.Violation
	for _, d := range ce.Details {
		raw, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(d.Value, "="))
		if err != nil {
			continue
		}
		switch d.Type {
		case "weft.v1.Fault":
			f := &weftv1.Fault{}
			if proto.Unmarshal(raw, f) == nil {
				fault = f
			}
		case "buf.validate.Violations":
			v := &validate.Violations{}
			if proto.Unmarshal(raw, v) == nil {
				violations = append(violations, v.GetViolations()...)
			}
		}
	}
	return fault, violations
}

// mustProtoJSON renders m in proto JSON with proto field names.
func mustProtoJSON(m proto.Message) json.RawMessage {
	out, err := jsonMarshal.Marshal(m)
	if err != nil {
		return jsonNull
	}
	return out
}
