package wiretest

import (
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"strings"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"
	"google.golang.org/protobuf/types/known/structpb"
)

// Method is one procedure a fuzz request targets.
type Method struct {
	// Procedure is "weft.v1.RunService/GetRun".
	Procedure string
	// Input is the request message.
	Input protoreflect.MessageDescriptor
	// Streaming says the server streams its answer.
	Streaming bool
	// Idempotent says Connect GET may call it.
	Idempotent bool
}

// Methods answers every method of the named services.
func Methods(services []string) ([]Method, error) {
	var out []Method
	for _, name := range services {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", name, err)
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			return nil, fmt.Errorf("%s is not a service", name)
		}
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i)
			opts, _ := md.Options().(*descriptorpb.MethodOptions)
			out = append(out, Method{Procedure: name + "/" + string(md.Name()), Input: md.Input(),
				Streaming:  md.IsStreamingServer(),
				Idempotent: opts.GetIdempotencyLevel() == descriptorpb.MethodOptions_NO_SIDE_EFFECTS})
		}
	}
	return out, nil
}

// Generator makes fuzz requests from a fixed seed: a well-formed request of
// the method with Marker planted in every payload (google.protobuf.Struct and
// Value fields, map keys and values), then mutated.
type Generator struct {
	// Marker is planted in payloads; no error answer may quote it.
	Marker string
	rng    *rand.Rand
}

// NewGenerator answers a generator whose requests follow from seed.
func NewGenerator(seed uint64, marker string) *Generator {
	return &Generator{Marker: marker, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))}
}

// Body answers a request body of m in the protocol's codec, mutated or not,
// and the wire the protocol sends (enveloped, well or badly, where it
// envelopes).
func (g *Generator) Body(m Method, p Protocol) (body, wire []byte) {
	msg := g.message(m.Input, 0)
	if p.JSON {
		body, _ = protojson.MarshalOptions{UseProtoNames: g.rng.IntN(2) == 0}.Marshal(msg)
	} else {
		body, _ = proto.Marshal(msg)
	}
	if g.rng.IntN(5) > 0 {
		body = g.mutate(body, p.JSON)
	}
	if !p.Enveloped {
		return body, body
	}
	return body, g.envelope(body)
}

// message builds a random well-formed message of md.
func (g *Generator) message(md protoreflect.MessageDescriptor, depth int) proto.Message {
	msg := dynamicpb.NewMessage(md)
	fields := md.Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		if g.rng.IntN(4) == 0 || (fd.ContainingOneof() != nil && msg.WhichOneof(fd.ContainingOneof()) != nil) {
			continue
		}
		switch {
		case fd.IsList():
			list := msg.Mutable(fd).List()
			for range g.rng.IntN(3) {
				if v, ok := g.value(fd, depth); ok {
					list.Append(v)
				}
			}
		case fd.IsMap():
			mp := msg.Mutable(fd).Map()
			for range g.rng.IntN(3) {
				k, ok := g.value(fd.MapKey(), depth)
				v, ok2 := g.value(fd.MapValue(), depth)
				if ok && ok2 {
					if fd.MapKey().Kind() == protoreflect.StringKind {
						k = protoreflect.ValueOfString(g.Marker + k.String())
					}
					mp.Set(k.MapKey(), v)
				}
			}
		default:
			if v, ok := g.value(fd, depth); ok {
				msg.Set(fd, v)
			}
		}
	}
	return msg
}

// value builds one random value of fd's type.
func (g *Generator) value(fd protoreflect.FieldDescriptor, depth int) (protoreflect.Value, bool) {
	name := string(fd.Name())
	switch fd.Kind() {
	case protoreflect.StringKind:
		return protoreflect.ValueOfString(fmt.Sprintf("%s-%d", name, g.rng.IntN(1000))), true
	case protoreflect.BytesKind:
		return protoreflect.ValueOfBytes([]byte(g.Marker)), true
	case protoreflect.BoolKind:
		return protoreflect.ValueOfBool(g.rng.IntN(2) == 0), true
	case protoreflect.EnumKind:
		vals := fd.Enum().Values()
		return protoreflect.ValueOfEnum(vals.Get(g.rng.IntN(vals.Len())).Number()), true
	case protoreflect.Int32Kind, protoreflect.Sint32Kind, protoreflect.Sfixed32Kind:
		return protoreflect.ValueOfInt32(int32(g.small(name))), true
	case protoreflect.Int64Kind, protoreflect.Sint64Kind, protoreflect.Sfixed64Kind:
		return protoreflect.ValueOfInt64(int64(g.small(name))), true
	case protoreflect.Uint32Kind, protoreflect.Fixed32Kind:
		return protoreflect.ValueOfUint32(uint32(g.small(name))), true
	case protoreflect.Uint64Kind, protoreflect.Fixed64Kind:
		return protoreflect.ValueOfUint64(uint64(g.small(name))), true
	case protoreflect.FloatKind:
		return protoreflect.ValueOfFloat32(float32(g.rng.Float64())), true
	case protoreflect.DoubleKind:
		return protoreflect.ValueOfFloat64(g.rng.Float64()), true
	}
	md := fd.Message()
	switch md.FullName() {
	case "google.protobuf.Value", "google.protobuf.Struct":
		s, _ := structpb.NewStruct(map[string]any{g.Marker: g.Marker, "n": 1, "list": []any{g.Marker, true}})
		if md.FullName() == "google.protobuf.Value" {
			return protoreflect.ValueOfMessage(structpb.NewStructValue(s).ProtoReflect()), true
		}
		return protoreflect.ValueOfMessage(s.ProtoReflect()), true
	}
	if depth > 3 {
		return protoreflect.Value{}, false
	}
	return protoreflect.ValueOfMessage(g.message(md, depth+1).ProtoReflect()), true
}

// small answers a small number; waits stay short so long polls end soon.
func (g *Generator) small(name string) int {
	if strings.Contains(name, "wait") || strings.Contains(name, "timeout") {
		return g.rng.IntN(20)
	}
	return g.rng.IntN(200)
}

// jsonTokens are JSON fragments a mutation splices in.
var jsonTokens = []string{`"`, `{`, `}`, `[`, `]`, `,`, `:`, `null`, `true`, `1e999`, `-1`, `"\ud800"`,
	"\xff\xfe", `{"a":1,"a":2}`, `"RUN_STATUS_NOPE"`, `"1970-13-45T99:99:99Z"`, `"-5s"`, `0x10`}

// mutate changes body in one to three ways.
func (g *Generator) mutate(body []byte, isJSON bool) []byte {
	b := append([]byte(nil), body...)
	for range 1 + g.rng.IntN(3) {
		n := len(b)
		switch op := g.rng.IntN(7); {
		case op == 0 && n > 0: // truncate
			b = b[:g.rng.IntN(n)]
		case op == 1 && n > 0: // flip bits
			for range 1 + g.rng.IntN(4) {
				b[g.rng.IntN(n)] ^= 1 << g.rng.IntN(8)
			}
		case op == 2: // insert random bytes
			at := g.rng.IntN(n + 1)
			junk := make([]byte, 1+g.rng.IntN(8))
			for i := range junk {
				junk[i] = byte(g.rng.IntN(256))
			}
			b = append(b[:at], append(junk, b[at:]...)...)
		case op == 3 && n > 1: // delete a span
			at := g.rng.IntN(n)
			end := min(n, at+1+g.rng.IntN(16))
			b = append(b[:at], b[end:]...)
		case op == 4 && n > 1: // duplicate a span
			at := g.rng.IntN(n)
			end := min(n, at+1+g.rng.IntN(32))
			b = append(b[:end], append(append([]byte(nil), b[at:end]...), b[end:]...)...)
		case op == 5 && isJSON: // splice a JSON fragment
			at := g.rng.IntN(n + 1)
			tok := jsonTokens[g.rng.IntN(len(jsonTokens))]
			b = append(b[:at], append([]byte(tok), b[at:]...)...)
		default: // replace with random bytes
			b = make([]byte, g.rng.IntN(64))
			for i := range b {
				b[i] = byte(g.rng.IntN(256))
			}
		}
	}
	return b
}

// envelope frames body, usually well, sometimes with a wrong length, flags,
// a second message or no frame at all.
func (g *Generator) envelope(body []byte) []byte {
	out := Envelope(body)
	switch g.rng.IntN(8) {
	case 0: // declares more than it sends
		binary.BigEndian.PutUint32(out[1:5], uint32(len(body)+1+g.rng.IntN(100)))
	case 1: // declares less than it sends
		if len(body) > 0 {
			binary.BigEndian.PutUint32(out[1:5], uint32(g.rng.IntN(len(body))))
		}
	case 2: // random flags
		out[0] = byte(g.rng.IntN(256))
	case 3: // two messages
		out = append(out, Envelope(body)...)
	case 4: // a cut prefix or no frame
		return out[:g.rng.IntN(min(len(out), 8)+1)]
	}
	return out
}

// EchoAllowed reports whether an answer may quote the marker: only when the
// body decodes as m's request and the marker sits in an identifier (a string
// field outside any payload), which the API answers by design (a run_id in
// a not-found fault). An undecodable body's answer may quote nothing.
func EchoAllowed(m Method, p Protocol, body []byte, marker string) bool {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(m.Input.FullName())
	if err != nil {
		return false
	}
	// The generated type, as the server decodes it (dynamicpb's decoder
	// panics on some malformed map entries).
	msg := mt.New().Interface()
	if p.JSON {
		err = protojson.UnmarshalOptions{DiscardUnknown: true}.Unmarshal(body, msg)
	} else {
		err = proto.Unmarshal(body, msg)
	}
	if err != nil {
		return false
	}
	return markedIdentifier(msg.ProtoReflect(), marker)
}

// markedIdentifier reports whether a string field of m, outside payloads,
// holds the marker.
func markedIdentifier(m protoreflect.Message, marker string) bool {
	found := false
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch {
		case fd.IsMap() && fd.Name() == "search_attributes":
			// A search attribute's name is an identifier (queries name it,
			// ListSearchAttributes lists it, a fault names it); its value is
			// payload.
			v.Map().Range(func(k protoreflect.MapKey, _ protoreflect.Value) bool {
				found = found || strings.Contains(k.String(), marker)
				return !found
			})
		case fd.IsMap():
			// A map's keys and values are payload, never identifiers.
		case fd.IsList():
			for i := range v.List().Len() {
				found = found || leafMarked(fd, v.List().Get(i), marker)
			}
		default:
			found = leafMarked(fd, v, marker)
		}
		return !found
	})
	return found
}

func leafMarked(fd protoreflect.FieldDescriptor, v protoreflect.Value, marker string) bool {
	switch {
	case fd.Kind() == protoreflect.StringKind:
		return strings.Contains(v.String(), marker)
	case fd.Message() != nil && fd.Message().FullName().Parent() != "google.protobuf":
		return markedIdentifier(v.Message(), marker)
	}
	return false
}
