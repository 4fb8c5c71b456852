package server

import (
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"buf.build/go/protovalidate"
	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/protorules"
)

// requestTypes are the request messages of every service the server answers.
func requestTypes(t testing.TB) []protoreflect.MessageType {
	t.Helper()
	var out []protoreflect.MessageType
	for _, name := range ServiceNames {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		require.NoError(t, err)
		methods := d.(protoreflect.ServiceDescriptor).Methods()
		for i := range methods.Len() {
			mt, err := protoregistry.GlobalTypes.FindMessageByName(methods.Get(i).Input().FullName())
			require.NoError(t, err)
			if !slices.Contains(out, mt) {
				out = append(out, mt)
			}
		}
	}
	return out
}

func TestRequestRules_CompileEveryRequestMessage(t *testing.T) {
	t.Parallel()
	rules := compileRequestRules(ServiceNames)
	for _, mt := range requestTypes(t) {
		require.Contains(t, rules.byType, mt.Descriptor().FullName(), "its requests would all go to protovalidate")
	}
}

// A rule the compilation does not know leaves its message to protovalidate:
// compiling it fails, it never passes for certain.
func TestRequestRules_LeaveAMessageWithAnUnknownRuleToProtovalidate(t *testing.T) {
	t.Parallel()
	_, err := protorules.Compile(messageWithRule(t, &validate.FieldRules{Type: &validate.FieldRules_String_{
		String_: &validate.StringRules{WellKnown: &validate.StringRules_Email{Email: true}}}}))
	require.ErrorContains(t, err, "string.email is not compiled")
	rules := &requestRules{byType: map[protoreflect.FullName]*protorules.Message{}}
	require.False(t, rules.passes(&weftv1.CompleteTaskRequest{TaskToken: "t", WorkerId: "w"}))
}

// messageWithRule answers a message descriptor of one string field with
// the rules given.
func messageWithRule(t *testing.T, rules *validate.FieldRules) protoreflect.MessageDescriptor {
	t.Helper()
	opts := &descriptorpb.FieldOptions{}
	proto.SetExtension(opts, validate.E_Field, rules)
	fdp := &descriptorpb.FileDescriptorProto{
		Name: proto.String("ruletest.proto"), Package: proto.String("ruletest"), Syntax: proto.String("proto3"),
		Dependency: []string{"buf/validate/validate.proto"},
		MessageType: []*descriptorpb.DescriptorProto{{Name: proto.String("M"), Field: []*descriptorpb.FieldDescriptorProto{{
			Name: proto.String("s"), Number: proto.Int32(1), Label: descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL.Enum(),
			Type: descriptorpb.FieldDescriptorProto_TYPE_STRING.Enum(), JsonName: proto.String("s"), Options: opts}}}},
	}
	fd, err := protodesc.NewFile(fdp, protoregistry.GlobalFiles)
	require.NoError(t, err)
	return fd.Messages().Get(0)
}

// ruleEdges are every numeric value a rule of md (or of a message it
// holds) names, and its neighbours: the values where a bound or a length
// turns.
func ruleEdges(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]bool, edges map[uint64]bool, floats map[float64]bool) {
	if seen[md.FullName()] {
		return
	}
	seen[md.FullName()] = true
	var walk func(m protoreflect.Message)
	walk = func(m protoreflect.Message) {
		m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
			switch {
			case fd.IsList() && fd.Message() == nil:
				l := v.List()
				for i := range l.Len() {
					addEdge(fd.Kind(), l.Get(i), edges, floats)
				}
			case fd.IsList():
			case fd.Message() != nil:
				walk(v.Message())
			default:
				addEdge(fd.Kind(), v, edges, floats)
			}
			return true
		})
	}
	for i := range md.Fields().Len() {
		fd := md.Fields().Get(i)
		if fr, ok := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules); ok && fr != nil {
			walk(fr.ProtoReflect())
		}
		if fd.Message() != nil {
			ruleEdges(fd.Message(), seen, edges, floats)
		}
	}
}

func addEdge(kind protoreflect.Kind, v protoreflect.Value, edges map[uint64]bool, floats map[float64]bool) {
	switch kind {
	case protoreflect.Uint32Kind, protoreflect.Uint64Kind:
		n := v.Uint()
		edges[n], edges[n+1] = true, true
		if n > 0 {
			edges[n-1] = true
		}
	case protoreflect.Int32Kind, protoreflect.Int64Kind:
		if n := v.Int(); n >= 0 {
			edges[uint64(n)], edges[uint64(n)+1] = true, true
			if n > 0 {
				edges[uint64(n)-1] = true
			}
		}
	case protoreflect.DoubleKind:
		x := v.Float()
		floats[x], floats[math.Nextafter(x, math.Inf(1))], floats[math.Nextafter(x, math.Inf(-1))] = true, true, true
	}
}

// generator makes request messages whose every field is drawn from the
// values where the rules turn: most break a rule somewhere, many break none.
type generator struct {
	r      *rand.Rand
	edges  []uint64
	floats []float64
	// wild is the chance that a field gets an edge value rather than a
	// plain one that passes most rules.
	wild float64
}

func newGenerator(t testing.TB, r *rand.Rand) *generator {
	edges, floats := map[uint64]bool{0: true, 1: true, 2: true, math.MaxUint32: true, math.MaxUint64: true},
		map[float64]bool{0: true, -1: true, 2: true, math.NaN(): true, math.Inf(1): true, math.Inf(-1): true}
	seen := map[protoreflect.FullName]bool{}
	for _, mt := range requestTypes(t) {
		ruleEdges(mt.Descriptor(), seen, edges, floats)
	}
	g := &generator{r: r}
	for n := range edges {
		g.edges = append(g.edges, n)
	}
	for x := range floats {
		g.floats = append(g.floats, x)
	}
	slices.Sort(g.edges)
	slices.Sort(g.floats)
	return g
}

func (g *generator) message(mt protoreflect.MessageType) proto.Message {
	g.wild = []float64{0, 0.02, 0.1, 0.4}[g.r.IntN(4)]
	m := mt.New()
	g.fill(m, 0)
	return m.Interface()
}

func (g *generator) chance(p float64) bool { return g.r.Float64() < p }

func (g *generator) fill(m protoreflect.Message, depth int) {
	md := m.Descriptor()
	for i := range md.Fields().Len() {
		fd := md.Fields().Get(i)
		if od := fd.ContainingOneof(); od != nil && !od.IsSynthetic() {
			continue
		}
		switch {
		case fd.IsList():
			g.fillList(m, fd, depth)
		case fd.IsMap():
			g.fillMap(m, fd, depth)
		case fd.HasPresence() && g.chance(0.3):
			// unset
		case fd.Message() != nil:
			if depth < 4 {
				g.fill(m.Mutable(fd).Message(), depth+1)
			}
		default:
			m.Set(fd, g.scalar(fd))
		}
	}
	for i := range md.Oneofs().Len() {
		od := md.Oneofs().Get(i)
		if od.IsSynthetic() || g.chance(0.2) {
			continue
		}
		fd := od.Fields().Get(g.r.IntN(od.Fields().Len()))
		if fd.Message() == nil {
			m.Set(fd, g.scalar(fd))
		} else if depth < 4 {
			g.fill(m.Mutable(fd).Message(), depth+1)
		}
	}
}

func (g *generator) fillList(m protoreflect.Message, fd protoreflect.FieldDescriptor, depth int) {
	n := []int{0, 1, 1, 2, 3}[g.r.IntN(5)]
	if g.chance(g.wild / 4) {
		n = int(min(g.edges[g.r.IntN(len(g.edges))], 1001))
	}
	if depth >= 4 {
		n = 0
	}
	l := m.Mutable(fd).List()
	for i := range n {
		switch {
		case i >= 3 && fd.Message() != nil:
			l.Append(protoreflect.ValueOfMessage(proto.Clone(l.Get(0).Message().Interface()).ProtoReflect())) // a long list, cheaply
		case i >= 3 && fd.Kind() == protoreflect.StringKind:
			l.Append(protoreflect.ValueOfString("s" + strconv.Itoa(i)))
		case fd.Message() != nil:
			v := l.NewElement()
			g.fill(v.Message(), depth+1)
			l.Append(v)
		case i > 0 && g.chance(0.3):
			l.Append(l.Get(g.r.IntN(i))) // a duplicate
		default:
			l.Append(g.scalar(fd))
		}
	}
}

func (g *generator) fillMap(m protoreflect.Message, fd protoreflect.FieldDescriptor, depth int) {
	if depth >= 3 {
		return
	}
	mp := m.Mutable(fd).Map()
	for range g.r.IntN(3) {
		k := g.scalar(fd.MapKey()).MapKey()
		if fd.MapValue().Message() != nil {
			v := mp.NewValue()
			g.fill(v.Message(), depth+1)
			mp.Set(k, v)
		} else {
			mp.Set(k, g.scalar(fd.MapValue()))
		}
	}
}

var plainStrings = []string{"a1", "Run1", "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", strings.Repeat("ab12", 16)}

func (g *generator) scalar(fd protoreflect.FieldDescriptor) protoreflect.Value {
	wild := g.chance(g.wild)
	switch fd.Kind() {
	case protoreflect.StringKind:
		if !wild {
			return protoreflect.ValueOfString(plainStrings[g.r.IntN(len(plainStrings))])
		}
		return protoreflect.ValueOfString(g.wildString())
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(g.chance(0.5))
	case protoreflect.EnumKind:
		values := fd.Enum().Values()
		if !wild {
			return protoreflect.ValueOfEnum(values.Get(min(1, values.Len()-1) + g.r.IntN(max(values.Len()-1, 1))).Number())
		}
		return protoreflect.ValueOfEnum([]protoreflect.EnumNumber{0, values.Get(values.Len()-1).Number() + 1, -1,
			values.Get(g.r.IntN(values.Len())).Number()}[g.r.IntN(4)])
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		n := plainUint(fd)
		if wild {
			n = min(g.edges[g.r.IntN(len(g.edges))], math.MaxUint32)
		}
		return protoreflect.ValueOfUint32(uint32(n))
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		n := plainUint(fd)
		if wild {
			n = g.edges[g.r.IntN(len(g.edges))]
		}
		return protoreflect.ValueOfUint64(n)
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(g.r.IntN(2000) - 1000))
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(g.r.IntN(2000) - 1000))
	case protoreflect.DoubleKind:
		x := 2.0
		if wild {
			x = g.floats[g.r.IntN(len(g.floats))]
		}
		return protoreflect.ValueOfFloat64(x)
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(g.r.NormFloat64()))
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte("x"))
	}
	panic("no generator for " + fd.Kind().String())
}

// plainUint is a field's lower bound, or 1 when it has none: a value that
// passes most rules.
func plainUint(fd protoreflect.FieldDescriptor) uint64 {
	fr, _ := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules)
	switch {
	case fr.GetUint32().HasGte():
		return uint64(fr.GetUint32().GetGte())
	case fr.GetUint64().HasGte():
		return fr.GetUint64().GetGte()
	}
	return 1
}

// wildString is a string at the edges of the string rules: a length where a
// bound turns, in one-byte or two-byte characters, or a shape a pattern or
// the UUID rule tells apart.
func (g *generator) wildString() string {
	n := int(min(g.edges[g.r.IntN(len(g.edges))], 5000))
	switch g.r.IntN(9) {
	case 0:
		return strings.Repeat("é", n)
	case 1:
		return "-" + strings.Repeat("a", max(n-1, 0))
	case 2:
		return strings.Repeat("0123456789abcdef", n/16+1)[:n]
	case 3:
		return strings.Repeat("0123456789ABCDEF", n/16+1)[:n]
	case 4:
		return []string{"", "0195B3C2-7C1E-7E3A-9D41-2F1A6B8C9D0E", "0195b3c2x7c1e-7e3a-9d41-2f1a6b8c9d0e", "a b", "a.b:c/d+e_f", "_a"}[g.r.IntN(6)]
	default:
		return strings.Repeat("a", n)
	}
}

// agree fails t unless the compiled rules pass m exactly when protovalidate
// finds no violation in it; it answers whether m is valid.
func agree(t testing.TB, rules *requestRules, v protovalidate.Validator, m proto.Message) bool {
	t.Helper()
	err := v.Validate(m)
	if err != nil {
		var verr *protovalidate.ValidationError
		require.ErrorAs(t, err, &verr, "protovalidate could not evaluate a rule")
	}
	require.Equal(t, err == nil, rules.passes(m), "%s %v: protovalidate answers %v", m.ProtoReflect().Descriptor().FullName(), m, err)
	// The same message as a dynamic one is read through protoreflect, not
	// on its generated struct: both readings give the same verdict.
	if c := rules.byType[m.ProtoReflect().Descriptor().FullName()]; c != nil {
		dyn := dynamicpb.NewMessage(m.ProtoReflect().Descriptor())
		proto.Merge(dyn, m)
		require.Equal(t, err == nil, c.Passes(dyn.ProtoReflect()), "%s %v read through protoreflect: protovalidate answers %v",
			m.ProtoReflect().Descriptor().FullName(), m, err)
	}
	return err == nil
}

func TestRequestRules_PassExactlyTheRequestsProtovalidatePasses(t *testing.T) {
	t.Parallel()
	rules := compileRequestRules(ServiceNames)
	v, err := protovalidate.New()
	require.NoError(t, err)
	g := newGenerator(t, rand.New(rand.NewPCG(16, 2026)))
	for _, mt := range requestTypes(t) {
		// Each type draws from its own stream, so a new request type or
		// rule elsewhere does not change what this one is tested with.
		g.r = rand.New(rand.NewPCG(16, nameSeed(mt.Descriptor().FullName())))
		valid, invalid := 0, 0
		for range 1000 {
			if agree(t, rules, v, g.message(mt)) {
				valid++
			} else {
				invalid++
			}
		}
		t.Logf("%s: %d valid, %d invalid", mt.Descriptor().FullName(), valid, invalid)
		require.Positive(t, valid, "%s: the generator must also make valid requests", mt.Descriptor().FullName())
		if hasRules(rules.byType[mt.Descriptor().FullName()]) {
			require.Positive(t, invalid, "%s: the generator must also break the rules", mt.Descriptor().FullName())
		}
	}
}

// nameSeed is a seed drawn from a message's name (FNV-1a).
func nameSeed(name protoreflect.FullName) uint64 {
	h := uint64(14695981039346656037)
	for i := range len(name) {
		h = (h ^ uint64(name[i])) * 1099511628211
	}
	return h
}

func hasRules(c *protorules.Message) bool { return c != nil && !c.Empty() }

func FuzzRequestRules_AgreeWithProtovalidate(f *testing.F) {
	rules := compileRequestRules(ServiceNames)
	v, err := protovalidate.New()
	require.NoError(f, err)
	types := requestTypes(f)
	g := newGenerator(f, nil)
	f.Add(uint64(1), uint64(2))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		g.r = rand.New(rand.NewPCG(a, b))
		agree(t, rules, v, g.message(types[a%uint64(len(types))]))
	})
}

// A valid worker call is passed by the compiled rules, without protovalidate.
func TestRequestRules_PassAValidWorkerCallWithoutProtovalidate(t *testing.T) {
	t.Parallel()
	rules := compileRequestRules(ServiceNames)
	req := &weftv1.CompleteTaskRequest{TaskToken: "task-00#abcdef", WorkerId: "bench-worker-0",
		Output:    structpb.NewStructValue(&structpb.Struct{}),
		NextTasks: &weftv1.PollTasksRequest{WorkerId: "bench-worker-0", Queue: "default", MaxTasks: 1, Activities: []*weftv1.ActivityRegistration{{Name: "bench.noop"}}}}
	require.True(t, rules.passes(req))
	require.True(t, rules.passes(&weftv1.AwaitRunRequest{RunId: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", WaitMs: 1000}))
}

// An invalid request gets protovalidate's error: invalid_argument with its
// violations (field and rule) as the detail.
func TestValidation_AnInvalidRequestGetsProtovalidatesViolations(t *testing.T) {
	t.Parallel()
	v, err := protovalidate.New()
	require.NoError(t, err)
	in := &validationInterceptor{rules: compileRequestRules(ServiceNames), validator: v}
	req := &weftv1.CompleteTaskRequest{TaskToken: "", WorkerId: strings.Repeat("w", 257)}
	got := in.check(req)
	var cerr *connect.Error
	require.ErrorAs(t, got, &cerr)
	require.Equal(t, connect.CodeInvalidArgument, cerr.Code())
	want := v.Validate(req)
	require.Error(t, want)
	require.Equal(t, want.Error(), cerr.Message())
	var detail *validate.Violations
	for _, d := range cerr.Details() {
		if m, derr := d.Value(); derr == nil {
			if vs, ok := m.(*validate.Violations); ok {
				detail = vs
			}
		}
	}
	var verr *protovalidate.ValidationError
	require.ErrorAs(t, want, &verr)
	require.True(t, proto.Equal(verr.ToProto(), detail), "the detail is protovalidate's violations")
}

// benchRequests are the requests of a worker's and a client's calls in
// weftbench's workload: a completion asking for the next task, a
// five-step submission, the wait for its run.
func benchRequests() map[string]proto.Message {
	var actions []*weftv1.Action
	for i := range 5 {
		actions = append(actions, &weftv1.Action{Id: "step-" + strconv.Itoa(i+1), Order: uint32(i + 1), Activity: "bench.noop"})
	}
	return map[string]proto.Message{
		"CompleteTask": &weftv1.CompleteTaskRequest{TaskToken: "task-00#abcdef", WorkerId: "bench-worker-0",
			Output: structpb.NewStructValue(&structpb.Struct{}),
			NextTasks: &weftv1.PollTasksRequest{WorkerId: "bench-worker-0", Queue: "default", MaxTasks: 1,
				Activities: []*weftv1.ActivityRegistration{{Name: "bench.noop"}}}},
		"SubmitRun": &weftv1.SubmitRunRequest{Definition: &weftv1.WorkflowDefinition{PlanId: "bench", PlanVersion: "1", Actions: actions},
			RunRequestId: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", Start: true},
		"AwaitRun": &weftv1.AwaitRunRequest{RunId: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", WaitMs: 30000},
	}
}

// BenchmarkRequestRules is the compiled rules against protovalidate on
// the workload's requests, each valid.
func BenchmarkRequestRules(b *testing.B) {
	rules := compileRequestRules(ServiceNames)
	v, err := protovalidate.New()
	require.NoError(b, err)
	for name, m := range benchRequests() {
		require.NoError(b, v.Validate(m))
		b.Run(name+"/compiled", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if !rules.passes(m) {
					b.Fatal("refused")
				}
			}
		})
		b.Run(name+"/protovalidate", func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if err := v.Validate(m); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
