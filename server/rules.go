package server

import (
	"fmt"
	"math"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// requestRules are the request messages' protovalidate rules compiled once
// per message type into direct checks — string lengths and patterns, UUIDs,
// numeric bounds, enums, required fields and oneofs, list sizes and items —
// so that a valid request costs a walk over its ruled fields instead of
// protovalidate's general evaluator. They answer only whether a request
// passes: a request they do not pass goes to protovalidate, whose error (each
// field and rule) is the one the caller gets. So the error is protovalidate's
// by construction, and what must hold is that passes agrees with
// protovalidate on which requests are valid; a property test and a fuzz
// target hold the two together. A message whose rules include one the
// compilation does not know is not compiled, and every request of that type
// goes to protovalidate.
type requestRules struct {
	byType map[protoreflect.FullName]*messageCheck
}

// requestRulesOnce are the rules of the services weftd serves, compiled on
// first use.
var requestRulesOnce = sync.OnceValue(func() *requestRules { return compileRequestRules(ServiceNames) })

// compileRequestRules compiles the rules of every request message of the
// named services; a message that does not compile is left out.
func compileRequestRules(services []string) *requestRules {
	out := &requestRules{byType: map[protoreflect.FullName]*messageCheck{}}
	for _, name := range services {
		d, err := protoregistry.GlobalFiles.FindDescriptorByName(protoreflect.FullName(name))
		if err != nil {
			continue
		}
		sd, ok := d.(protoreflect.ServiceDescriptor)
		if !ok {
			continue
		}
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i).Input()
			if c, err := compileCheck(md, map[protoreflect.FullName]*messageCheck{}); err == nil {
				out.byType[md.FullName()] = c
			}
		}
	}
	return out
}

// passes reports whether m passes its rules for certain. False means that
// protovalidate must decide: m breaks a rule, or its type was not compiled.
func (r *requestRules) passes(m proto.Message) bool {
	pm := m.ProtoReflect()
	c, ok := r.byType[pm.Descriptor().FullName()]
	return ok && c.passes(pm)
}

// messageCheck is one message's compiled rules.
type messageCheck struct {
	fields []fieldCheck
	// oneofs must each have a member set.
	oneofs []protoreflect.OneofDescriptor
	// exprs are the message's CEL rules, as Go (knownExpressions).
	exprs []func(protoreflect.Message) bool
	// empty: neither the message nor any message it holds has a rule.
	empty bool
}

// fieldCheck is one field's compiled rules.
type fieldCheck struct {
	fd       protoreflect.FieldDescriptor
	required bool
	// presence: the field's rules apply only when it is set (a field with
	// explicit presence, a message, a oneof member). A list's rules apply
	// always; so do a field's without presence, to its zero value too.
	presence bool
	// value are the rules on a singular field's value.
	value *valueCheck
	// list: min_items, max_items, unique and the items' rules.
	minItems, maxItems *uint64
	unique             bool
	items              *valueCheck
	// nested are the rules of the message the field (or each item) holds;
	// nil when it has none.
	nested *messageCheck
}

// valueCheck is the rules on one scalar value.
type valueCheck struct {
	// strings
	minLen, maxLen     *uint64
	minBytes, maxBytes *uint64
	pattern            *regexp.Regexp
	// matched remembers values the pattern matched (queue and activity
	// names repeat), so that most are matched without the regexp engine.
	matched *matchCache
	uuid    bool
	// unsigned integers
	ugte, ulte, uconst *uint64
	// doubles: NaN fails every bound, as in protovalidate.
	dgte, dlte *float64
	// enums
	enum        protoreflect.EnumDescriptor
	definedOnly bool
	notIn       []protoreflect.EnumNumber
}

// knownExpressions are the CEL message rules the compilation knows, by their
// expression text, each as the Go predicate it is over the message's
// descriptor. A CEL rule whose text is not here leaves its message
// uncompiled.
var knownExpressions = map[string]func(md protoreflect.MessageDescriptor) (func(protoreflect.Message) bool, error){
	// weft.v1.Action's action.kind.
	"has(this.wait_for_signal) ? this.activity == '' : (this.activity != '' || this.completion_mode == 2)": func(md protoreflect.MessageDescriptor) (func(protoreflect.Message) bool, error) {
		wait, activity, mode, err := actionFields(md)
		return func(m protoreflect.Message) bool {
			if m.Has(wait) {
				return m.Get(activity).String() == ""
			}
			return m.Get(activity).String() != "" || m.Get(mode).Enum() == 2
		}, err
	},
	// weft.v1.Action's action.manual_signal.
	"!(has(this.wait_for_signal) && this.completion_mode == 2)": func(md protoreflect.MessageDescriptor) (func(protoreflect.Message) bool, error) {
		wait, _, mode, err := actionFields(md)
		return func(m protoreflect.Message) bool { return !(m.Has(wait) && m.Get(mode).Enum() == 2) }, err
	},
}

// actionFields are the fields the Action expressions read, each of the kind
// the expression reads it as.
func actionFields(md protoreflect.MessageDescriptor) (wait, activity, mode protoreflect.FieldDescriptor, err error) {
	wait, activity, mode = md.Fields().ByName("wait_for_signal"), md.Fields().ByName("activity"), md.Fields().ByName("completion_mode")
	if wait == nil || wait.Message() == nil || wait.IsList() || activity == nil || activity.Kind() != protoreflect.StringKind ||
		activity.IsList() || mode == nil || mode.Kind() != protoreflect.EnumKind || mode.IsList() {
		return nil, nil, nil, fmt.Errorf("%s: not the fields the expression reads", md.FullName())
	}
	return wait, activity, mode, nil
}

func compileCheck(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]*messageCheck) (*messageCheck, error) {
	if c, ok := seen[md.FullName()]; ok {
		return c, nil // compiled, or being compiled (a cycle adds no rule of its own)
	}
	out := &messageCheck{empty: true}
	seen[md.FullName()] = out
	if err := out.compileMessageRules(md); err != nil {
		return nil, err
	}
	for i := range md.Oneofs().Len() {
		od := md.Oneofs().Get(i)
		or, ok := proto.GetExtension(od.Options(), validate.E_Oneof).(*validate.OneofRules)
		if !ok || or == nil || countSet(or.ProtoReflect()) == 0 {
			continue
		}
		if !or.GetRequired() || countSet(or.ProtoReflect()) != 1 {
			return nil, fmt.Errorf("%s: oneof rules other than required are not compiled", od.FullName())
		}
		out.oneofs = append(out.oneofs, od)
	}
	for i := range md.Fields().Len() {
		fc, err := compileFieldCheck(md.Fields().Get(i), seen)
		if err != nil {
			return nil, err
		}
		if fc != nil {
			out.fields = append(out.fields, *fc)
		}
	}
	out.empty = len(out.fields) == 0 && len(out.oneofs) == 0 && len(out.exprs) == 0
	return out, nil
}

// compileMessageRules reads the message's own rules: CEL expressions the
// compilation knows, nothing else.
func (c *messageCheck) compileMessageRules(md protoreflect.MessageDescriptor) error {
	mr, ok := proto.GetExtension(md.Options(), validate.E_Message).(*validate.MessageRules)
	if !ok || mr == nil || countSet(mr.ProtoReflect()) == 0 {
		return nil
	}
	if countSet(mr.ProtoReflect()) != 1 || len(mr.GetCel()) == 0 {
		return fmt.Errorf("%s: message rules other than CEL are not compiled", md.FullName())
	}
	for _, rule := range mr.GetCel() {
		build, ok := knownExpressions[rule.GetExpression()]
		if !ok {
			return fmt.Errorf("%s: CEL rule %s is not compiled", md.FullName(), rule.GetId())
		}
		expr, err := build(md)
		if err != nil {
			return err
		}
		c.exprs = append(c.exprs, expr)
	}
	return nil
}

func compileFieldCheck(fd protoreflect.FieldDescriptor, seen map[protoreflect.FullName]*messageCheck) (*fieldCheck, error) {
	out := &fieldCheck{fd: fd}
	fr, _ := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules)
	ruled := fr != nil && countSet(fr.ProtoReflect()) > 0
	if ruled {
		if err := out.compileRules(fd, fr); err != nil {
			return nil, err
		}
	}
	switch {
	case fd.IsMap():
		for _, vd := range []protoreflect.FieldDescriptor{fd.MapKey(), fd.MapValue()} {
			if vd.Message() == nil {
				continue
			}
			if nested, err := compileCheck(vd.Message(), seen); err != nil || !nested.empty {
				return nil, fmt.Errorf("%s: rules inside a map are not compiled", fd.FullName())
			}
		}
	case fd.Message() != nil:
		nested, err := compileCheck(fd.Message(), seen)
		if err != nil {
			return nil, err
		}
		if !nested.empty {
			out.nested = nested
		}
	}
	if !ruled && out.nested == nil {
		return nil, nil
	}
	out.presence = !fd.IsList() && (fd.HasPresence() || fd.Message() != nil)
	return out, nil
}

// compileRules reads one field's rules, refusing any it does not know.
func (f *fieldCheck) compileRules(fd protoreflect.FieldDescriptor, fr *validate.FieldRules) error {
	var err error
	fr.ProtoReflect().Range(func(rd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := string(rd.Name())
		switch {
		case name == "required":
			f.required = v.Bool()
		case name == "repeated" && fd.IsList():
			err = f.compileList(fd, v.Message().Interface().(*validate.RepeatedRules))
		case fd.IsList() || fd.IsMap() || rd.Message() == nil || rd.IsList():
			err = fmt.Errorf("%s: rule %s is not compiled", fd.FullName(), name)
		default:
			f.value, err = compileValue(fd, name, v.Message())
		}
		return err == nil
	})
	return err
}

func (f *fieldCheck) compileList(fd protoreflect.FieldDescriptor, rr *validate.RepeatedRules) error {
	var err error
	rr.ProtoReflect().Range(func(rd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		switch rd.Name() {
		case "min_items":
			n := v.Uint()
			f.minItems = &n
		case "max_items":
			n := v.Uint()
			f.maxItems = &n
		case "unique":
			f.unique = v.Bool()
			if f.unique && (fd.Message() != nil || fd.Kind() == protoreflect.BytesKind || fd.Kind() == protoreflect.FloatKind ||
				fd.Kind() == protoreflect.DoubleKind) {
				err = fmt.Errorf("%s: repeated.unique on a %s is not compiled", fd.FullName(), fd.Kind())
			}
		case "items":
			err = f.compileItems(fd, v.Message().Interface().(*validate.FieldRules))
		default:
			err = fmt.Errorf("%s: rule repeated.%s is not compiled", fd.FullName(), rd.Name())
		}
		return err == nil
	})
	return err
}

func (f *fieldCheck) compileItems(fd protoreflect.FieldDescriptor, fr *validate.FieldRules) error {
	var err error
	fr.ProtoReflect().Range(func(rd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if rd.Message() == nil || rd.IsList() || fd.Message() != nil {
			err = fmt.Errorf("%s: item rule %s is not compiled", fd.FullName(), rd.Name())
			return false
		}
		f.items, err = compileValue(fd, string(rd.Name()), v.Message())
		return err == nil
	})
	return err
}

// valueKinds are the value rule kinds compiled, by the field kind each
// applies to, and the rules of each kind compiled.
var valueKinds = map[string]struct {
	kind  protoreflect.Kind
	rules []string
}{
	"string": {protoreflect.StringKind, []string{"min_len", "max_len", "min_bytes", "max_bytes", "pattern", "uuid"}},
	"uint32": {protoreflect.Uint32Kind, []string{"gte", "lte", "const"}},
	"uint64": {protoreflect.Uint64Kind, []string{"gte", "lte", "const"}},
	"double": {protoreflect.DoubleKind, []string{"gte", "lte"}},
	"enum":   {protoreflect.EnumKind, []string{"defined_only", "not_in"}},
}

// compileValue reads the rules of one kind (string, uint32, ...) on a
// scalar value.
func compileValue(fd protoreflect.FieldDescriptor, kind string, rules protoreflect.Message) (*valueCheck, error) {
	known, ok := valueKinds[kind]
	if !ok || known.kind != fd.Kind() {
		return nil, fmt.Errorf("%s: rule %s is not compiled", fd.FullName(), kind)
	}
	out := &valueCheck{}
	if fd.Kind() == protoreflect.EnumKind {
		out.enum = fd.Enum()
	}
	var err error
	rules.Range(func(rd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		name := string(rd.Name())
		if !slices.Contains(known.rules, name) {
			err = fmt.Errorf("%s: rule %s.%s is not compiled", fd.FullName(), kind, name)
			return false
		}
		err = out.set(name, v)
		return err == nil
	})
	if err == nil && (out.ugte != nil && out.ulte != nil && *out.ugte > *out.ulte || out.dgte != nil && out.dlte != nil && *out.dgte > *out.dlte) {
		err = fmt.Errorf("%s: an exclusive range is not compiled", fd.FullName())
	}
	return out, err
}

func (c *valueCheck) set(rule string, v protoreflect.Value) error {
	switch x := v.Interface().(type) {
	case uint32, uint64:
		n := v.Uint()
		switch rule {
		case "gte":
			c.ugte = &n
		case "lte":
			c.ulte = &n
		case "const":
			c.uconst = &n
		case "min_len":
			c.minLen = &n
		case "max_len":
			c.maxLen = &n
		case "min_bytes":
			c.minBytes = &n
		case "max_bytes":
			c.maxBytes = &n
		}
	case float64:
		if math.IsNaN(x) {
			return fmt.Errorf("a NaN bound is not compiled")
		}
		if rule == "gte" {
			c.dgte = &x
		} else {
			c.dlte = &x
		}
	case string: // pattern
		re, err := regexp.Compile(x)
		if err != nil {
			return err
		}
		c.pattern, c.matched = re, &matchCache{}
	case bool:
		if rule == "uuid" {
			c.uuid = x
		} else {
			c.definedOnly = x
		}
	case protoreflect.List: // enum.not_in
		for i := range x.Len() {
			c.notIn = append(c.notIn, protoreflect.EnumNumber(x.Get(i).Int()))
		}
	default:
		return fmt.Errorf("rule %s of type %T is not compiled", rule, x)
	}
	return nil
}

func countSet(m protoreflect.Message) int {
	n := 0
	m.Range(func(protoreflect.FieldDescriptor, protoreflect.Value) bool { n++; return true })
	return n
}

// passes reports whether m passes every rule of its message.
func (c *messageCheck) passes(m protoreflect.Message) bool {
	for i := range c.fields {
		if !c.fields[i].passes(m) {
			return false
		}
	}
	for _, od := range c.oneofs {
		if m.WhichOneof(od) == nil {
			return false
		}
	}
	for _, expr := range c.exprs {
		if !expr(m) {
			return false
		}
	}
	return true
}

func (f *fieldCheck) passes(m protoreflect.Message) bool {
	fd := f.fd
	// A field without presence (nor a rule that asks) is read as it is: its
	// zero value is checked too.
	set := !f.required && !f.presence && !fd.IsList() || m.Has(fd)
	switch {
	case f.required && !set:
		return false
	case f.presence && !set:
		return true
	case fd.IsList():
		if !set { // empty: only a minimum fails it
			return f.minItems == nil || *f.minItems == 0
		}
		return f.listPasses(m.Get(fd).List())
	case f.nested != nil && !f.nested.passes(m.Get(fd).Message()):
		return false
	}
	return f.value == nil || f.value.passes(fd, m.Get(fd))
}

func (f *fieldCheck) listPasses(l protoreflect.List) bool {
	n := uint64(l.Len())
	if f.minItems != nil && n < *f.minItems || f.maxItems != nil && n > *f.maxItems {
		return false
	}
	for i := range l.Len() {
		v := l.Get(i)
		if f.nested != nil && !f.nested.passes(v.Message()) {
			return false
		}
		if f.items != nil && !f.items.passes(f.fd, v) {
			return false
		}
		if f.unique {
			for j := range i {
				if l.Get(j).Equal(v) {
					return false
				}
			}
		}
	}
	return true
}

// passes reports whether a value of field fd passes the rules.
func (c *valueCheck) passes(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
	switch fd.Kind() {
	case protoreflect.StringKind:
		return c.stringPasses(v.String())
	case protoreflect.EnumKind:
		return c.enumPasses(v.Enum())
	case protoreflect.DoubleKind:
		x := v.Float()
		return (c.dgte == nil || x >= *c.dgte) && (c.dlte == nil || x <= *c.dlte) // NaN fails both
	default:
		n := v.Uint()
		return (c.ugte == nil || n >= *c.ugte) && (c.ulte == nil || n <= *c.ulte) && (c.uconst == nil || n == *c.uconst)
	}
}

func (c *valueCheck) stringPasses(s string) bool {
	if c.minLen != nil || c.maxLen != nil {
		n := uint64(utf8.RuneCountInString(s))
		if c.minLen != nil && n < *c.minLen || c.maxLen != nil && n > *c.maxLen {
			return false
		}
	}
	if n := uint64(len(s)); c.minBytes != nil && n < *c.minBytes || c.maxBytes != nil && n > *c.maxBytes {
		return false
	}
	if c.pattern != nil && !c.matched.match(c.pattern, s) {
		return false
	}
	return !c.uuid || isUUID(s)
}

func (c *valueCheck) enumPasses(n protoreflect.EnumNumber) bool {
	if c.definedOnly && c.enum.Values().ByNumber(n) == nil {
		return false
	}
	return !slices.Contains(c.notIn, n)
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
	if c.n.Add(1) <= maxMatched {
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
