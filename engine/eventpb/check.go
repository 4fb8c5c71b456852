package eventpb

import (
	"sync"

	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/internal/protorules"
)

// Check is Validate at the cost of what the rules check
// (docs/semantics.md#event-validation). The rules stay where they are
// declared, on the proto Event and the messages it holds: they are compiled
// once from the descriptors (internal/protorules) and bound to the fields
// of the runstate.Event each proto field is converted from (fieldReaders),
// so an event costs a walk over its envelope's and its payload's ruled
// fields — no conversion, no allocation. An event they pass is valid; an
// event they do not pass goes to Validate, whose answer (each field and
// rule) is Check's, so a refusal is protovalidate's by construction. A
// property test and a fuzz target hold the two together on random events of
// every type. Should the proto gain a ruled field no reader reads, that
// event type's payload (or, for the envelope, every event) is converted and
// checked by the compiled rules; should it gain a rule the compilation does
// not know, Check is Validate.
func Check(ev *runstate.Event) error {
	if c := eventChecks(); c != nil && c.passes(ev) {
		return nil
	}
	return Validate(ev)
}

// eventCheck is weftv1.Event's compiled rules, bound to runstate.Event.
type eventCheck struct {
	// rules are the Event's compiled rules, for an event its fields cannot
	// be read for: checked on its conversion.
	rules *protorules.Message
	// envelope is the envelope's rules read on the event; nil when a ruled
	// field of it has no reader (every event is then converted).
	envelope *boundMessage
	// payloads are, by event type, its payload's rules read on the event
	// (nil when they have no reader: the event is converted). A type
	// without a payload is not here: the required oneof refuses it.
	payloads map[string]*boundMessage
}

// eventChecks compiles and binds the rules once; nil when the Event's rules
// do not compile (Check is then Validate).
var eventChecks = sync.OnceValue(func() *eventCheck {
	md := (&weftv1.Event{}).ProtoReflect().Descriptor()
	rules, err := protorules.Compile(md)
	if err != nil {
		return nil
	}
	return bindEvent(md, rules)
})

// bindEvent binds the compiled rules of md, the proto Event, to the fields
// of runstate.Event: the envelope's and, per event type, the payload's
// that its filler (payloads) sets.
func bindEvent(md protoreflect.MessageDescriptor, rules *protorules.Message) *eventCheck {
	payload := md.Oneofs().ByName("payload")
	out := &eventCheck{rules: rules, payloads: map[string]*boundMessage{}}
	direct := payload != nil && !rules.HasExpressions()
	for _, od := range rules.RequiredOneofs() {
		direct = direct && od == payload
	}
	members := map[protoreflect.FieldNumber]*protorules.Field{}
	var envelope []protorules.Field
	for i, f := range rules.Fields() {
		if od := f.Descriptor().ContainingOneof(); od != nil && od == payload {
			members[f.Descriptor().Number()] = &rules.Fields()[i]
			continue
		}
		envelope = append(envelope, f)
	}
	if direct {
		out.envelope = bindFields(envelope, false)
	}
	for typ, fill := range payloads {
		probe := &weftv1.Event{}
		fill(&runstate.Event{Type: typ}, probe)
		fd := probe.ProtoReflect().WhichOneof(payload)
		if fd == nil {
			continue
		}
		f, ruled := members[fd.Number()]
		switch {
		case !ruled: // a payload without rules
			out.payloads[typ] = &boundMessage{}
		case f.Nested() != nil && !f.Nested().HasExpressions() && len(f.Nested().RequiredOneofs()) == 0:
			out.payloads[typ] = bindFields(f.Nested().Fields(), false)
		default:
			out.payloads[typ] = nil
		}
	}
	return out
}

// passes reports whether ev passes every rule of the proto Event as Event
// converts it. False means that Validate must decide.
func (c *eventCheck) passes(ev *runstate.Event) bool {
	p, ok := c.payloads[ev.Type]
	if !ok {
		return false // no payload: the required oneof refuses it
	}
	if c.envelope == nil || p == nil {
		// No rule reaches inside a google.protobuf.Value (a step's output):
		// it is left out, the dearest part of a conversion. Were one to,
		// the event would not pass here and Validate would decide.
		lean := *ev
		lean.Data.Output = nil
		return c.rules.Passes(Event(&lean).ProtoReflect())
	}
	return c.envelope.passes(ev, 0) && p.passes(ev, 0)
}

// boundMessage is a message's rules, each field read on the event.
type boundMessage struct {
	fields []boundField
}

// boundField is one field's rules and its reader.
type boundField struct {
	rules  *protorules.Field
	read   fieldReader
	nested *boundMessage
}

// fieldReader reads, on the event (and item, the index of the list item
// being checked, for the fields of a message a list holds), a proto field
// as the conversion sets it: a singular field's value and whether it is
// set (a message non-nil, a scalar non-zero), a list's length.
type fieldReader struct {
	value func(ev *runstate.Event, item int) (protoreflect.Value, bool)
	len   func(ev *runstate.Event) int
}

// bindFields binds the fields' rules to their readers; nil when one has no
// reader, or a rule that cannot be read so (an item rule, a list inside a
// list, a message with CEL rules or a required oneof).
func bindFields(fields []protorules.Field, inList bool) *boundMessage {
	out := &boundMessage{}
	for i := range fields {
		f := &fields[i]
		fd := f.Descriptor()
		read, ok := readerFor(fd)
		if !ok || fd.IsList() && (read.len == nil || inList || f.HasItemRules()) || !fd.IsList() && read.value == nil {
			return nil
		}
		b := boundField{rules: f, read: read}
		if n := f.Nested(); n != nil {
			if n.HasExpressions() || len(n.RequiredOneofs()) > 0 {
				return nil
			}
			if b.nested = bindFields(n.Fields(), inList || fd.IsList()); b.nested == nil {
				return nil
			}
		}
		out.fields = append(out.fields, b)
	}
	return out
}

// passes reports whether the event's fields pass the message's rules, as
// protorules.Message.Passes on the converted message.
func (m *boundMessage) passes(ev *runstate.Event, item int) bool {
	for i := range m.fields {
		if !m.fields[i].passes(ev, item) {
			return false
		}
	}
	return true
}

func (f *boundField) passes(ev *runstate.Event, item int) bool {
	r := f.rules
	if f.read.len != nil {
		n := f.read.len(ev)
		if !r.LenPasses(n) {
			return false
		}
		if f.nested != nil {
			for i := range n {
				if !f.nested.passes(ev, i) {
					return false
				}
			}
		}
		return true
	}
	v, set := f.read.value(ev, item)
	if !r.Presence() && !r.Required() {
		set = true // a field without presence is checked as it is, its zero value too
	}
	if !set {
		return !r.Required()
	}
	if f.nested != nil && !f.nested.passes(ev, item) {
		return false
	}
	return r.ValuePasses(v)
}
