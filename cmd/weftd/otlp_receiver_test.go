package main

import (
	"context"
	"encoding/hex"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	commonpb "go.opentelemetry.io/proto/otlp/common/v1"
	tracepb "go.opentelemetry.io/proto/otlp/trace/v1"
	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
)

// otlpReceiver is an OTLP trace receiver in the test process, over HTTP
// (POST /v1/traces, protobuf) and gRPC (TraceService/Export): what weftd
// and the workers export lands here, decoded as OTLP defines it.
type otlpReceiver struct {
	coltracepb.UnimplementedTraceServiceServer
	httpURL  string // http://127.0.0.1:port
	grpcURL  string // http://127.0.0.1:port
	mu       sync.Mutex
	received []gotSpan
}

// gotSpan is one exported span, flattened.
type gotSpan struct {
	Service                 string
	TraceID, SpanID, Parent string
	Name                    string
	Attrs                   map[string]string
	Links                   []string // linked span ids
	Status                  string
	StatusCode              tracepb.Status_StatusCode
	Start, End              uint64
}

func startOTLPReceiver(t *testing.T) *otlpReceiver {
	t.Helper()
	r := &otlpReceiver{}
	srv := httptest.NewServer(http.HandlerFunc(r.serveHTTP))
	t.Cleanup(srv.Close)
	r.httpURL = srv.URL
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	g := grpc.NewServer()
	coltracepb.RegisterTraceServiceServer(g, r)
	go func() { _ = g.Serve(lis) }()
	t.Cleanup(g.Stop)
	r.grpcURL = "http://" + lis.Addr().String()
	return r
}

func (r *otlpReceiver) serveHTTP(w http.ResponseWriter, req *http.Request) {
	if req.Method != http.MethodPost || req.URL.Path != "/v1/traces" {
		http.NotFound(w, req)
		return
	}
	body, err := io.ReadAll(req.Body)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	var msg coltracepb.ExportTraceServiceRequest
	if err := proto.Unmarshal(body, &msg); err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	r.add(&msg)
	out, _ := proto.Marshal(&coltracepb.ExportTraceServiceResponse{})
	w.Header().Set("Content-Type", "application/x-protobuf")
	_, _ = w.Write(out)
}

// Export implements the OTLP gRPC trace service.
func (r *otlpReceiver) Export(_ context.Context, msg *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	r.add(msg)
	return &coltracepb.ExportTraceServiceResponse{}, nil
}

func (r *otlpReceiver) add(msg *coltracepb.ExportTraceServiceRequest) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, rs := range msg.GetResourceSpans() {
		service := attrsOf(rs.GetResource().GetAttributes())["service.name"]
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				g := gotSpan{Service: service, TraceID: hex.EncodeToString(s.GetTraceId()), SpanID: hex.EncodeToString(s.GetSpanId()),
					Parent: hex.EncodeToString(s.GetParentSpanId()), Name: s.GetName(), Attrs: attrsOf(s.GetAttributes()),
					Status: s.GetStatus().GetMessage(), StatusCode: s.GetStatus().GetCode(),
					Start: s.GetStartTimeUnixNano(), End: s.GetEndTimeUnixNano()}
				for _, l := range s.GetLinks() {
					g.Links = append(g.Links, hex.EncodeToString(l.GetSpanId()))
				}
				for _, ev := range s.GetEvents() { // events' names and attributes are checked as attributes
					for k, v := range attrsOf(ev.GetAttributes()) {
						g.Attrs["event."+ev.GetName()+"."+k] = v
					}
				}
				r.received = append(r.received, g)
			}
		}
	}
}

// spans answers every span received so far.
func (r *otlpReceiver) spans() []gotSpan {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]gotSpan(nil), r.received...)
}

func attrsOf(kvs []*commonpb.KeyValue) map[string]string {
	out := map[string]string{}
	for _, kv := range kvs {
		out[kv.GetKey()] = anyValueText(kv.GetValue())
	}
	return out
}

// anyValueText renders an attribute's value as text, arrays joined.
func anyValueText(v *commonpb.AnyValue) string {
	switch x := v.GetValue().(type) {
	case *commonpb.AnyValue_StringValue:
		return x.StringValue
	case *commonpb.AnyValue_ArrayValue:
		s := ""
		for i, e := range x.ArrayValue.GetValues() {
			if i > 0 {
				s += ","
			}
			s += anyValueText(e)
		}
		return s
	case *commonpb.AnyValue_IntValue:
		return strconv.FormatInt(x.IntValue, 10)
	case *commonpb.AnyValue_BoolValue:
		return strconv.FormatBool(x.BoolValue)
	}
	return v.String()
}

// renderTree draws the spans of traceID as an indented tree, children in
// the order they started, each with its duration and what it names: the
// picture of docs/observability.md is made from it (WEFT_TRACE_DUMP).
func renderTree(spans []gotSpan, traceID string) string {
	children := map[string][]gotSpan{}
	ids := map[string]bool{}
	for _, s := range spans {
		if s.TraceID == traceID {
			ids[s.SpanID] = true
		}
	}
	var roots []gotSpan
	for _, s := range spans {
		if s.TraceID != traceID {
			continue
		}
		if ids[s.Parent] {
			children[s.Parent] = append(children[s.Parent], s)
		} else {
			roots = append(roots, s)
		}
	}
	var b strings.Builder
	var draw func(s gotSpan, prefix string, last bool, depth int)
	draw = func(s gotSpan, prefix string, last bool, depth int) {
		branch, next := "├─ ", "│  "
		if last {
			branch, next = "└─ ", "   "
		}
		if depth == 0 {
			branch, next = "", ""
		}
		fmt.Fprintf(&b, "%s%s%s  [%s] %s%s\n", prefix, branch, s.Name, s.Service, durationText(s), labelText(s))
		kids := children[s.SpanID]
		sort.SliceStable(kids, func(i, j int) bool { return kids[i].Start < kids[j].Start })
		for i, k := range kids {
			draw(k, prefix+next, i == len(kids)-1, depth+1)
		}
	}
	sort.SliceStable(roots, func(i, j int) bool { return roots[i].Start < roots[j].Start })
	for _, r := range roots {
		draw(r, "", true, 0)
	}
	return b.String()
}

func durationText(s gotSpan) string {
	d := time.Duration(s.End - s.Start)
	return d.Round(10 * time.Microsecond).String()
}

// labelText is what the tree shows of a span's attributes.
func labelText(s gotSpan) string {
	var parts []string
	for _, k := range []string{"weft.step", "weft.attempt", "weft.queue", "weft.outcome", "weft.decided_by", "weft.store.ops"} {
		if v, ok := s.Attrs[k]; ok {
			parts = append(parts, strings.TrimPrefix(k, "weft.")+"="+v)
		}
	}
	if len(s.Links) > 0 {
		parts = append(parts, "linked to the call")
	}
	if len(parts) == 0 {
		return ""
	}
	return "  " + strings.Join(parts, " ")
}
