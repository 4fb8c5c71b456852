package server

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"time"

	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// CorrelationHeader carries the request's correlation id in every response;
// the same id is in the Fault detail of an error and in the server's log line.
const CorrelationHeader = "Weft-Correlation-Id"

// CorrelationID answers the request's correlation id, or "" outside a request.
func CorrelationID(ctx context.Context) string {
	if s := stateOf(ctx); s != nil {
		return s.id
	}
	return ""
}

// begin answers ctx with the request's state (edge.go), the one
// withTransportFaults gave the request or, for a call that did not pass it,
// a new one with a new correlation id. It answers the id when it is new,
// which the response must then carry; "" when withTransportFaults already
// put the request's id on the response.
func begin(ctx context.Context) (context.Context, *requestState, string) {
	if s := stateOf(ctx); s != nil {
		return ctx, s, ""
	}
	id := newCorrelationID()
	ctx, s := withRequestState(ctx, id)
	return ctx, s, id
}

// viaJSONRPCKey marks a call the JSON-RPC endpoint forwarded, so that its
// log line and metrics name the protocol the client spoke.
type viaJSONRPCKey struct{}

func protocolOf(ctx context.Context, wire string) string {
	if ctx.Value(viaJSONRPCKey{}) != nil {
		return "jsonrpc"
	}
	return wire
}

// faultInterceptor is the outermost interceptor: it gives every request a
// correlation id, makes every error a Connect error with a Fault detail that
// carries that id, hides internal error text from clients, and logs one line
// per call (with the tenant and principal, never with a payload) and its
// metrics.
type faultInterceptor struct {
	logger  *slog.Logger
	metrics *metrics
}

func (f *faultInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		ctx, state, id := begin(ctx)
		start := time.Now()
		f.metrics.inFlight.Add(1)
		defer f.metrics.inFlight.Add(-1)
		res, err := next(ctx, req)
		err = f.finish(ctx, state, req.Spec().Procedure, req.Peer().Protocol, start, err)
		if err != nil {
			return nil, err
		}
		f.metrics.outcome(res.Any())
		if id != "" {
			res.Header().Set(CorrelationHeader, id)
		}
		return res, nil
	}
}

func (f *faultInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (f *faultInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		ctx, state, id := begin(ctx)
		if id != "" {
			conn.ResponseHeader().Set(CorrelationHeader, id)
		}
		start := time.Now()
		f.metrics.inFlight.Add(1)
		defer f.metrics.inFlight.Add(-1)
		err := next(ctx, conn)
		return f.finish(ctx, state, conn.Spec().Procedure, conn.Peer().Protocol, start, err)
	}
}

// finish normalises the error, counts the call and logs it.
func (f *faultInterceptor) finish(ctx context.Context, state *requestState, procedure, protocol string, start time.Time, err error) error {
	protocol = protocolOf(ctx, protocol)
	took := time.Since(start)
	if err == nil {
		f.metrics.observe(procedure, protocol, nil, took)
		f.log(ctx, state, slog.LevelDebug, "rpc", procedure, protocol, took)
		return nil
	}
	cerr := withFault(callerEnded(ctx, err), state.id)
	f.metrics.observe(procedure, protocol, cerr, took)
	code := slog.String("code", cerr.Code().String())
	switch cerr.Code() {
	case connect.CodeInternal:
		// The original error text goes to the log only; it may name internals.
		f.log(ctx, state, slog.LevelError, "rpc failed", procedure, protocol, took, code, slog.String("error", err.Error()))
	case connect.CodeCanceled, connect.CodeDeadlineExceeded:
		// The caller's own: what failed once it stopped waiting goes to the log.
		f.log(ctx, state, slog.LevelInfo, "rpc failed", procedure, protocol, took, code, slog.String("error", err.Error()))
	default:
		f.log(ctx, state, slog.LevelInfo, "rpc failed", procedure, protocol, took, code)
	}
	return cerr
}

// callerEnded answers a call's error as the caller's own deadline or
// cancellation when the call's context has ended and the error would
// otherwise be internal: whatever failed then (a store whose connection
// closed with the context, say) failed because the caller stopped waiting,
// which is no fault of the server's. Any other error stands.
func callerEnded(ctx context.Context, err error) error {
	if ctx.Err() == nil {
		return err
	}
	var cerr *connect.Error
	if errors.As(engineFault(err), &cerr) && cerr.Code() != connect.CodeInternal && cerr.Code() != connect.CodeUnknown {
		return err
	}
	return contextFault(ctx.Err())
}

// log writes a call's line, built only when the logger takes the level: a
// successful call's line is a debug line, which weftd usually drops.
func (f *faultInterceptor) log(ctx context.Context, state *requestState, level slog.Level, msg, procedure, protocol string, took time.Duration, extra ...slog.Attr) {
	if !f.logger.Enabled(ctx, level) {
		return
	}
	var who caller
	if state.authed {
		who = state.who
	}
	attrs := append([]slog.Attr{
		slog.String("procedure", procedure),
		slog.String("protocol", protocol),
		slog.String("correlation_id", state.id),
		slog.String("tenant", who.tenant),
		slog.String("principal", who.principal),
		slog.Int64("duration_us", took.Microseconds()),
	}, extra...)
	f.logger.LogAttrs(ctx, level, msg, attrs...)
}

// withFault is the one place an error becomes what a client sees: a Connect
// error whose Fault detail carries the correlation id. An engine error
// becomes its fault (engineFault); a Connect error keeps its code and
// details; anything else is internal, and its text is replaced so nothing
// internal (or a payload) reaches the client. The message is made valid
// UTF-8, which gRPC's status encoding requires.
func withFault(err error, correlationID string) *connect.Error {
	err = engineFault(err)
	var cerr *connect.Error
	if !errors.As(err, &cerr) {
		cerr = connect.NewError(connect.CodeInternal, errors.New("internal error; the correlation id finds the server log line"))
	}
	fault, ok := FaultOf(cerr)
	if ok {
		fault = proto.CloneOf(fault)
	} else {
		fault = &weftv1.Fault{Code: faultCodeFor(cerr.Code())}
	}
	fault.CorrelationId = correlationID
	out := connect.NewError(cerr.Code(), errors.New(strings.ToValidUTF8(cerr.Message(), "\uFFFD")))
	for _, d := range cerr.Details() {
		if v, derr := d.Value(); derr == nil {
			if _, isFault := v.(*weftv1.Fault); isFault {
				continue
			}
		}
		out.AddDetail(d)
	}
	for k, v := range cerr.Meta() {
		out.Meta()[k] = v
	}
	attachFault(out, fault)
	return out
}

// faultCodeFor answers the fault code of an error that carries none of its
// own: by its Connect code, none for a deadline or a cancellation (the
// caller's own, which the Connect code says; the Fault still carries the
// correlation id), else INTERNAL.
func faultCodeFor(code connect.Code) weftv1.FaultCode {
	if fc, ok := faultForConnectCode[code]; ok {
		return fc
	}
	if code == connect.CodeCanceled || code == connect.CodeDeadlineExceeded {
		return weftv1.FaultCode_FAULT_CODE_UNSPECIFIED
	}
	return weftv1.FaultCode_FAULT_CODE_INTERNAL
}

// validationInterceptor checks every request against its protovalidate rules
// before a handler sees it. A violation answers invalid_argument with a
// buf.validate.Violations detail naming each field and rule. A request the
// compiled rules pass needs nothing more; any other is protovalidate's to
// judge, so its error is protovalidate's (rules.go).
type validationInterceptor struct {
	rules     *requestRules
	validator protovalidate.Validator
}

func (v *validationInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if err := v.check(req.Any()); err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

func (v *validationInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

func (v *validationInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		return next(ctx, &validatingConn{StreamingHandlerConn: conn, check: v.check})
	}
}

// check validates one message.
func (v *validationInterceptor) check(msg any) error {
	m, ok := msg.(proto.Message)
	if !ok {
		return nil
	}
	if err := decodeRefusal(m); err != nil {
		return err // an enum name the server does not know (codec.go)
	}
	if v.rules.passes(m) {
		return nil
	}
	err := v.validator.Validate(m)
	if err == nil {
		return nil
	}
	var verr *protovalidate.ValidationError
	if !errors.As(err, &verr) {
		// A rule that cannot be evaluated is our bug, not the caller's.
		return connect.NewError(connect.CodeInternal, err)
	}
	cerr := connect.NewError(connect.CodeInvalidArgument, err)
	if detail, derr := connect.NewErrorDetail(verr.ToProto()); derr == nil {
		cerr.AddDetail(detail)
	}
	attachFault(cerr, &weftv1.Fault{Code: weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT})
	return cerr
}

// validatingConn validates each message a streaming handler receives.
type validatingConn struct {
	connect.StreamingHandlerConn
	check func(any) error
}

func (c *validatingConn) Receive(msg any) error {
	if err := c.StreamingHandlerConn.Receive(msg); err != nil {
		return err
	}
	return c.check(msg)
}
