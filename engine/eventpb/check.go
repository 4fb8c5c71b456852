package eventpb

import (
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// Check is Validate's rules at the cost of what they check
// (docs/semantics.md#event-validation). The rules stay where they are
// declared, on the proto Event and the messages it holds: they are read from
// the descriptors once and compiled into direct checks — string lengths and
// patterns, UUIDs, numeric bounds, enums, required fields and oneofs — so an
// event costs a walk over its ruled fields, not a general rule evaluator.
// The envelope's fields are read on the runstate.Event as Event would
// convert them (envelopeGetters); only the payload is converted. It answers what Validate answers, violation for violation
// (a property test holds the two together); should the proto ever carry a
// rule Check does not know, the compilation fails and Check is Validate.
func Check(ev *runstate.Event) error {
	rules, err := compiledEventRules()
	if err != nil {
		return Validate(ev)
	}
	var vs []definition.Violation
	if direct := directEnvelope(); direct != nil {
		direct.check(ev, &vs)
	} else {
		// No rule reaches inside a google.protobuf.Value (compileField
		// refuses one), so the output, converted only to be served, is
		// left out.
		lean := *ev
		lean.Data.Output = nil
		rules.check(Event(&lean).ProtoReflect(), nil, &vs)
	}
	if len(vs) == 0 {
		return nil
	}
	return &SchemaError{Type: ev.Type, Violations: vs}
}

// envelopeRules check an event's envelope on the runstate.Event itself —
// each ruled field read as Event would convert it — and convert only the
// payload, whose oneof holds the rest of the rules.
type envelopeRules struct {
	fields  []envelopeField
	payload *messageRules
}

type envelopeField struct {
	rules *fieldRules
	get   envelopeGetter
}

// envelopeGetter answers a field of the proto Event as Event converts it,
// and whether the converted field is set.
type envelopeGetter func(ev *runstate.Event) (protoreflect.Value, bool)

// envelopeGetters read the envelope's fields, by their proto names.
var envelopeGetters = map[protoreflect.Name]envelopeGetter{
	"event_type": func(ev *runstate.Event) (protoreflect.Value, bool) { return protoreflect.ValueOfString(ev.Type), true },
	"event_id":   func(ev *runstate.Event) (protoreflect.Value, bool) { return protoreflect.ValueOfString(ev.ID), true },
	"run_id":     func(ev *runstate.Event) (protoreflect.Value, bool) { return protoreflect.ValueOfString(ev.RunID), true },
	"run_seq":    func(ev *runstate.Event) (protoreflect.Value, bool) { return protoreflect.ValueOfUint64(ev.Seq), true },
	"idempotency_key": func(ev *runstate.Event) (protoreflect.Value, bool) {
		return protoreflect.ValueOfString(ev.IdempotencyKey), true
	},
	"emitted_at": func(ev *runstate.Event) (protoreflect.Value, bool) {
		return protoreflect.Value{}, !ev.EmittedAt.IsZero()
	},
	"occurred_at": func(ev *runstate.Event) (protoreflect.Value, bool) {
		return protoreflect.Value{}, !ev.OccurredAt.IsZero()
	},
	"emitted_by": func(ev *runstate.Event) (protoreflect.Value, bool) {
		return protoreflect.ValueOfString(ev.EmittedBy), true
	},
	"step_id": func(ev *runstate.Event) (protoreflect.Value, bool) {
		return protoreflect.ValueOfString(ev.StepID), true
	},
	"logical_attempt_id": func(ev *runstate.Event) (protoreflect.Value, bool) {
		return protoreflect.ValueOfUint32(uint32(max(ev.LogicalAttempt, 0))), true
	},
	"engine_attempt_id": func(ev *runstate.Event) (protoreflect.Value, bool) {
		return protoreflect.ValueOfUint32(uint32(max(ev.EngineAttempt, 0))), ev.EngineAttempt > 0
	},
	"plan_version": func(ev *runstate.Event) (protoreflect.Value, bool) {
		return protoreflect.ValueOfString(ev.PlanVersion), true
	},
}

// directEnvelope answers the envelope's rules read directly, or nil when a
// ruled field of the envelope has no getter (or holds a message with rules
// of its own): Check then converts the whole event.
var directEnvelope = sync.OnceValue(func() *envelopeRules {
	rules, err := compiledEventRules()
	if err != nil {
		return nil
	}
	out := &envelopeRules{payload: &messageRules{members: rules.members, memberOneofs: rules.memberOneofs, oneofs: rules.oneofs}}
	for i := range rules.fields {
		f := &rules.fields[i]
		get, ok := envelopeGetters[f.fd.Name()]
		if !ok || f.nested != nil {
			return nil
		}
		out.fields = append(out.fields, envelopeField{rules: f, get: get})
	}
	return out
})

// check appends ev's violations to vs, in the order messageRules.check
// finds them.
func (r *envelopeRules) check(ev *runstate.Event, vs *[]definition.Violation) {
	for _, f := range r.fields {
		v, set := f.get(ev)
		if !f.rules.presence {
			set = true
		}
		if f.rules.required && !set {
			*vs = append(*vs, f.rules.violation(nil, "required", "value is required"))
			continue
		}
		if set {
			f.rules.checkValue(v, nil, vs)
		}
	}
	out := &weftv1.Event{}
	if fill, ok := checkedPayloads[ev.Type]; ok {
		fill(ev, out)
	}
	r.payload.check(out.ProtoReflect(), nil, vs)
}

// compiledEventRules compiles the rules of weftv1.Event once.
var compiledEventRules = sync.OnceValues(func() (*messageRules, error) {
	return compileMessage((&weftv1.Event{}).ProtoReflect().Descriptor(), map[protoreflect.FullName]*messageRules{})
})

// messageRules are one message's compiled rules: its ruled fields (and the
// fields holding messages with rules), and its required oneofs.
type messageRules struct {
	fields []fieldRules
	// members are the ruled fields of its oneofs (memberOneofs), by
	// number: only the one set is checked, so a message with many payload
	// cases costs one of them.
	members      map[protoreflect.FieldNumber]*fieldRules
	memberOneofs []protoreflect.OneofDescriptor
	oneofs       []protoreflect.OneofDescriptor
	// empty: neither the message nor any message it holds has a rule.
	empty bool
}

// fieldRules are one field's compiled rules.
type fieldRules struct {
	fd       protoreflect.FieldDescriptor
	required bool
	// strings
	minLen, maxLen *uint64
	pattern        *regexp.Regexp
	// hexLen, when the pattern is ^[0-9a-f]{n}$ (or that or nothing,
	// hexOrEmpty), is n: matched without the regexp engine.
	hexLen     int
	hexOrEmpty bool
	// matched remembers a few values the pattern matched (event types
	// repeat), so that most are matched without the regexp engine.
	matched *matchCache
	uuid    bool
	// unsigned integers
	gte, lte *uint64
	// enums
	definedOnly bool
	notIn       []int32
	// nested is the rules of the message the field holds, nil when it has none.
	nested *messageRules
	// presence: whether the field is set matters (a required field, a
	// message, a field with explicit presence); other fields are read as
	// they are, without asking.
	presence bool
}

// The rule kinds Check implements, by the name protovalidate gives them;
// anything else fails the compilation.
var supportedRules = map[string]map[string]bool{
	"string": {"min_len": true, "max_len": true, "pattern": true, "uuid": true},
	"uint32": {"gte": true, "lte": true},
	"uint64": {"gte": true, "lte": true},
	"enum":   {"defined_only": true, "not_in": true},
}

func compileMessage(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]*messageRules) (*messageRules, error) {
	if r, ok := seen[md.FullName()]; ok {
		return r, nil // compiled, or being compiled (a cycle holds no rule of its own here)
	}
	out := &messageRules{empty: true}
	seen[md.FullName()] = out
	if mr, ok := proto.GetExtension(md.Options(), validate.E_Message).(*validate.MessageRules); ok && mr != nil && hasAny(mr.ProtoReflect()) {
		return nil, fmt.Errorf("%s: message rules are not supported", md.FullName())
	}
	for i := range md.Oneofs().Len() {
		od := md.Oneofs().Get(i)
		or, ok := proto.GetExtension(od.Options(), validate.E_Oneof).(*validate.OneofRules)
		if !ok || or == nil || !hasAny(or.ProtoReflect()) {
			continue
		}
		if !or.GetRequired() || countSet(or.ProtoReflect()) != 1 {
			return nil, fmt.Errorf("%s: oneof rules other than required are not supported", od.FullName())
		}
		out.oneofs = append(out.oneofs, od)
	}
	for i := range md.Fields().Len() {
		fd := md.Fields().Get(i)
		fr, err := compileField(fd, seen)
		if err != nil {
			return nil, err
		}
		switch od := fd.ContainingOneof(); {
		case fr == nil:
		case od != nil && !od.IsSynthetic():
			if out.members == nil {
				out.members = map[protoreflect.FieldNumber]*fieldRules{}
			}
			if !slices.Contains(out.memberOneofs, od) {
				out.memberOneofs = append(out.memberOneofs, od)
			}
			out.members[fd.Number()] = fr
		default:
			out.fields = append(out.fields, *fr)
		}
	}
	out.empty = len(out.fields) == 0 && len(out.members) == 0 && len(out.oneofs) == 0
	return out, nil
}

func compileField(fd protoreflect.FieldDescriptor, seen map[protoreflect.FullName]*messageRules) (*fieldRules, error) {
	out := &fieldRules{fd: fd}
	ruled := false
	if fr, ok := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules); ok && fr != nil && hasAny(fr.ProtoReflect()) {
		if err := out.compileRules(fd, fr); err != nil {
			return nil, err
		}
		ruled = true
	}
	if ruled && fd.Message() != nil && fd.Message().FullName().Parent() == "google.protobuf" && fd.Message().Name() != "Timestamp" {
		return nil, fmt.Errorf("%s: rules on a %s are not supported", fd.FullName(), fd.Message().FullName())
	}
	if fd.Message() != nil && !fd.IsMap() {
		nested, err := compileMessage(fd.Message(), seen)
		if err != nil {
			return nil, err
		}
		if !nested.empty {
			out.nested = nested
		}
	}
	if fd.IsMap() && fd.MapValue().Message() != nil {
		if nested, err := compileMessage(fd.MapValue().Message(), seen); err != nil || !nested.empty {
			return nil, errors.Join(fmt.Errorf("%s: rules inside a map are not supported", fd.FullName()), err)
		}
	}
	if !ruled && out.nested == nil {
		return nil, nil
	}
	out.presence = out.required || fd.HasPresence() || fd.Message() != nil || fd.IsList()
	return out, nil
}

// compileRules reads one field's rules, refusing any Check does not know.
func (f *fieldRules) compileRules(fd protoreflect.FieldDescriptor, fr *validate.FieldRules) error {
	var err error
	fr.ProtoReflect().Range(func(rd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := string(rd.Name())
		if name == "required" {
			f.required = v.Bool()
			return true
		}
		allowed, ok := supportedRules[name]
		if !ok || fd.IsList() || fd.IsMap() {
			err = fmt.Errorf("%s: rule %s is not supported", fd.FullName(), name)
			return false
		}
		v.Message().Range(func(sd protoreflect.FieldDescriptor, sv protoreflect.Value) bool {
			if !allowed[string(sd.Name())] {
				err = fmt.Errorf("%s: rule %s.%s is not supported", fd.FullName(), name, sd.Name())
				return false
			}
			err = f.set(name, string(sd.Name()), sv)
			return err == nil
		})
		return err == nil
	})
	return err
}

func (f *fieldRules) set(kind, rule string, v protoreflect.Value) error {
	switch kind + "." + rule {
	case "string.min_len":
		n := v.Uint()
		f.minLen = &n
	case "string.max_len":
		n := v.Uint()
		f.maxLen = &n
	case "string.pattern":
		re, err := regexp.Compile(v.String())
		if err != nil {
			return err
		}
		f.pattern = re
		f.matched = &matchCache{}
		if m := hexPattern.FindStringSubmatch(v.String()); m != nil {
			f.hexLen, _ = strconv.Atoi(m[2])
			f.hexOrEmpty = m[1] != ""
		}
	case "string.uuid":
		f.uuid = v.Bool()
	case "uint32.gte", "uint64.gte":
		n := v.Uint()
		f.gte = &n
	case "uint32.lte", "uint64.lte":
		n := v.Uint()
		f.lte = &n
	case "enum.defined_only":
		f.definedOnly = v.Bool()
	case "enum.not_in":
		l := v.List()
		for i := range l.Len() {
			f.notIn = append(f.notIn, int32(l.Get(i).Int()))
		}
	}
	return nil
}

func hasAny(m protoreflect.Message) bool { return countSet(m) > 0 }

func countSet(m protoreflect.Message) int {
	n := 0
	m.Range(func(protoreflect.FieldDescriptor, protoreflect.Value) bool { n++; return true })
	return n
}

// check appends m's violations to vs; path is the path of m itself.
func (r *messageRules) check(m protoreflect.Message, path []string, vs *[]definition.Violation) {
	for i := range r.fields {
		r.fields[i].check(m, path, vs)
	}
	for _, od := range r.memberOneofs {
		if fd := m.WhichOneof(od); fd != nil {
			if f, ok := r.members[fd.Number()]; ok {
				f.check(m, path, vs)
			}
		}
	}
	for _, od := range r.oneofs {
		if m.WhichOneof(od) == nil {
			*vs = append(*vs, definition.Violation{Field: fieldPath(path, string(od.Name())), Rule: "required",
				Message: "exactly one field is required in oneof"})
		}
	}
}

func (f *fieldRules) check(m protoreflect.Message, path []string, vs *[]definition.Violation) {
	fd := f.fd
	set := true // a field without presence is always checked, its zero value included
	if f.presence {
		set = m.Has(fd)
	}
	if f.required && !set {
		*vs = append(*vs, f.violation(path, "required", "value is required"))
		return
	}
	if f.nested != nil && set {
		if fd.IsList() {
			l := m.Get(fd).List()
			for i := range l.Len() {
				f.nested.check(l.Get(i).Message(), append(path, string(fd.Name())+"["+strconv.Itoa(i)+"]"), vs)
			}
		} else {
			f.nested.check(m.Get(fd).Message(), append(path, string(fd.Name())), vs)
		}
	}
	if !set {
		return // an unset field with presence is not checked
	}
	f.checkValue(m.Get(fd), path, vs)
}

// checkValue checks a set field's value against its rules.
func (f *fieldRules) checkValue(v protoreflect.Value, path []string, vs *[]definition.Violation) {
	fd := f.fd
	switch {
	case fd.Kind() == protoreflect.StringKind:
		f.checkString(v.String(), path, vs)
	case fd.Kind() == protoreflect.EnumKind:
		f.checkEnum(v.Enum(), path, vs)
	case f.gte != nil || f.lte != nil:
		f.checkUint(v.Uint(), path, vs)
	}
}

func (f *fieldRules) checkString(s string, path []string, vs *[]definition.Violation) {
	if f.minLen != nil || f.maxLen != nil {
		n := uint64(utf8.RuneCountInString(s))
		if f.minLen != nil && n < *f.minLen {
			*vs = append(*vs, f.violation(path, "string.min_len", "must be at least "+strconv.FormatUint(*f.minLen, 10)+" characters"))
		}
		if f.maxLen != nil && n > *f.maxLen {
			*vs = append(*vs, f.violation(path, "string.max_len", "must be at most "+strconv.FormatUint(*f.maxLen, 10)+" characters"))
		}
	}
	if f.pattern != nil && !f.matches(s) {
		*vs = append(*vs, f.violation(path, "string.pattern", "does not match regex pattern `"+f.pattern.String()+"`"))
	}
	if f.uuid {
		switch {
		case s == "":
			*vs = append(*vs, f.violation(path, "string.uuid_empty", "value is empty, which is not a valid UUID"))
		case !isUUID(s):
			*vs = append(*vs, f.violation(path, "string.uuid", "must be a valid UUID"))
		}
	}
}

func (f *fieldRules) checkEnum(n protoreflect.EnumNumber, path []string, vs *[]definition.Violation) {
	if f.definedOnly && f.fd.Enum().Values().ByNumber(n) == nil {
		*vs = append(*vs, f.violation(path, "enum.defined_only", "value must be one of the defined enum values"))
	}
	for _, x := range f.notIn {
		if int32(n) == x {
			*vs = append(*vs, f.violation(path, "enum.not_in", "must not be in list "+formatInts(f.notIn)))
			break
		}
	}
}

func (f *fieldRules) checkUint(n uint64, path []string, vs *[]definition.Violation) {
	kind := "uint64"
	if f.fd.Kind() == protoreflect.Uint32Kind {
		kind = "uint32"
	}
	if f.gte != nil && n < *f.gte {
		*vs = append(*vs, f.violation(path, kind+".gte", "must be greater than or equal to "+strconv.FormatUint(*f.gte, 10)))
	}
	if f.lte != nil && n > *f.lte {
		*vs = append(*vs, f.violation(path, kind+".lte", "must be less than or equal to "+strconv.FormatUint(*f.lte, 10)))
	}
}

func (f *fieldRules) violation(path []string, rule, msg string) definition.Violation {
	return definition.Violation{Field: fieldPath(path, string(f.fd.Name())), Rule: rule, Message: msg}
}

func fieldPath(path []string, name string) string {
	if len(path) == 0 {
		return name
	}
	return strings.Join(path, ".") + "." + name
}

func formatInts(ns []int32) string {
	parts := make([]string, len(ns))
	for i, n := range ns {
		parts[i] = strconv.Itoa(int(n))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// hexPattern recognises the patterns of fixed-length lowercase hex (a
// SHA-256), alone or optional.
var hexPattern = regexp.MustCompile(`^\^(\()?\[0-9a-f\]\{([0-9]+)\}(?:\)\?)?\$$`)

// matches reports whether s matches the field's pattern.
func (f *fieldRules) matches(s string) bool {
	if f.hexLen == 0 {
		return f.matched.match(f.pattern, s)
	}
	if s == "" && f.hexOrEmpty {
		return true
	}
	if len(s) != f.hexLen {
		return false
	}
	for i := range len(s) {
		if c := s[i]; !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

// matchCache holds up to maxMatched values a pattern matched.
type matchCache struct {
	values sync.Map
	n      atomic.Int32
}

const maxMatched = 256

func (c *matchCache) match(re *regexp.Regexp, s string) bool {
	if _, ok := c.values.Load(s); ok {
		return true
	}
	if !re.MatchString(s) {
		return false
	}
	if c.n.Load() < maxMatched {
		c.n.Add(1)
		c.values.Store(s, struct{}{})
	}
	return true
}

// isUUID reports whether s is a UUID in its canonical text form (hex digits
// of either case in groups of 8-4-4-4-12), as protovalidate's string.uuid.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		c := s[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
				return false
			}
		}
	}
	return true
}
