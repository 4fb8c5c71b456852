// Package protorules compiles a message's protovalidate rules, read once
// from its descriptors, into direct checks — string lengths and patterns,
// UUIDs, numeric bounds, enums, required fields and oneofs, list sizes and
// items, and the CEL message rules it knows — so that a valid message costs
// a walk over its ruled fields instead of protovalidate's general
// evaluator. The checks answer only whether a message passes: a caller
// sends a message they do not pass to protovalidate, whose answer (each
// field and rule) is the one given, so an error is protovalidate's by
// construction. A message whose rules include one the compilation does not
// know is not compiled (Compile fails), and its caller uses protovalidate.
//
// A message of the generated Go type its rules were compiled for is read on
// its struct (gostruct.go), field by field through reflect.Value, which
// costs a fraction of protoreflect's reads; any other (a dynamic message, a
// message with a required oneof or a ruled oneof member) is read through
// protoreflect. Both readings apply the same rules with the same verdicts.
//
// The server checks requests with it (server/rules.go) and the engine its
// events (engine/eventpb/check.go), both holding it to protovalidate with a
// property test and a fuzz target.
//
// Layering: it imports the standard library, protobuf and protovalidate's
// generated rule messages, nothing of Weft.
package protorules

import (
	"fmt"
	"math"
	"reflect"
	"regexp"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"unicode/utf8"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
)

// Message is one message's compiled rules.
type Message struct {
	fields []Field
	// oneofs must each have a member set.
	oneofs []protoreflect.OneofDescriptor
	// exprs are the message's CEL rules, as Go (knownExpressions).
	exprs []expr
	// empty: neither the message nor any message it holds has a rule.
	empty bool
	// compiling: the message is being compiled, so a field that holds it
	// (a cycle: a definition inside a sub-workflow step, a Value inside a
	// ListValue) cannot know yet whether it is empty and keeps it until
	// settle decides.
	compiling bool
	// desc is the message's descriptor (goBind reads it once settled).
	desc protoreflect.MessageDescriptor
	// goType is the generated Go type (*T) whose struct Passes reads
	// directly (goBind); nil: the message is read through protoreflect.
	goType reflect.Type
}

// Field is one field's compiled rules.
type Field struct {
	fd       protoreflect.FieldDescriptor
	ruled    bool // the field has rules of its own
	list     bool // fd.IsList(), asked on every read
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
	nested *Message
	// goIndex is the field's index in its message's generated struct, when
	// the message has a goType.
	goIndex int
}

// valueCheck is the rules on one scalar value.
type valueCheck struct {
	// kind is the kind of the field the value is of.
	kind protoreflect.Kind
	// strings
	minLen, maxLen     *uint64
	minBytes, maxBytes *uint64
	pattern            *regexp.Regexp
	// hexLen, when the pattern is ^[0-9a-f]{n}$ (or that or nothing,
	// hexOrEmpty), is n: matched without the regexp engine (a SHA-256 is
	// unique per event, a cache of matches would not hold it).
	hexLen     int
	hexOrEmpty bool
	// matched remembers values the pattern matched (queue, activity and
	// event type names repeat), so that most are matched without the
	// regexp engine.
	matched *matchCache
	uuid    bool
	// in, when set, is every value the string may have (string.in).
	in []string
	// unsigned integers
	ugte, ulte, uconst *uint64
	// doubles: NaN fails every bound, as in protovalidate.
	dgte, dlte *float64
	// enums
	enum        protoreflect.EnumDescriptor
	definedOnly bool
	notIn       []protoreflect.EnumNumber
}

// expr is a CEL message rule the compilation knows, as Go: a predicate over
// the Action fields both known rules read (actionFields).
type expr struct {
	wait, activity, mode protoreflect.FieldDescriptor
	// goIndex are their indexes in the generated struct, when the message
	// has a goType.
	goIndex [3]int
	test    func(waitSet bool, activity string, mode protoreflect.EnumNumber) bool
}

// knownExpressions are the CEL message rules the compilation knows, by their
// expression text, each as the Go predicate it is over the fields it reads.
// A CEL rule whose text is not here leaves its message uncompiled.
var knownExpressions = map[string]func(waitSet bool, activity string, mode protoreflect.EnumNumber) bool{
	// weft.v1.Action's action.kind.
	"has(this.wait_for_signal) ? this.activity == '' : (this.activity != '' || this.completion_mode == 2)": func(waitSet bool, activity string, mode protoreflect.EnumNumber) bool {
		if waitSet {
			return activity == ""
		}
		return activity != "" || mode == 2
	},
	// weft.v1.Action's action.manual_signal.
	"!(has(this.wait_for_signal) && this.completion_mode == 2)": func(waitSet bool, _ string, mode protoreflect.EnumNumber) bool {
		return !(waitSet && mode == 2)
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

// passes evaluates the rule on m, read through protoreflect.
func (e *expr) passes(m protoreflect.Message) bool {
	return e.test(m.Has(e.wait), m.Get(e.activity).String(), m.Get(e.mode).Enum())
}

// goPasses evaluates the rule on sv, the message's generated struct.
func (e *expr) goPasses(sv reflect.Value) bool {
	return e.test(!sv.Field(e.goIndex[0]).IsNil(), sv.Field(e.goIndex[1]).String(),
		protoreflect.EnumNumber(sv.Field(e.goIndex[2]).Int()))
}

// Compile compiles the rules of md and of the messages it holds; it fails
// when one of them carries a rule the compilation does not know.
func Compile(md protoreflect.MessageDescriptor) (*Message, error) {
	seen := map[protoreflect.FullName]*Message{}
	m, err := compileMessage(md, seen)
	if err != nil {
		return nil, err
	}
	settle(seen)
	return m, nil
}

// settle decides, once every message reachable is compiled, which are
// empty — no rule of their own and no field holding a message that is not
// empty, cycles included (a fixed point) — drops the fields that only held
// empty messages, and binds each message to its generated Go struct.
func settle(seen map[protoreflect.FullName]*Message) {
	for _, m := range seen {
		m.empty = len(m.oneofs) == 0 && len(m.exprs) == 0 && !slices.ContainsFunc(m.fields, func(f Field) bool { return f.ruled })
	}
	for changed := true; changed; {
		changed = false
		for _, m := range seen {
			if m.empty && slices.ContainsFunc(m.fields, func(f Field) bool { return f.nested != nil && !f.nested.empty }) {
				m.empty, changed = false, true
			}
		}
	}
	for _, m := range seen {
		kept := m.fields[:0]
		for _, f := range m.fields {
			if f.nested != nil && f.nested.empty {
				f.nested = nil
			}
			if f.ruled || f.nested != nil {
				kept = append(kept, f)
			}
		}
		m.fields = kept
		m.goBind(m.desc)
	}
}

func compileMessage(md protoreflect.MessageDescriptor, seen map[protoreflect.FullName]*Message) (*Message, error) {
	if c, ok := seen[md.FullName()]; ok {
		return c, nil // compiled, or being compiled (a cycle adds no rule of its own)
	}
	out := &Message{empty: true, compiling: true, desc: md}
	defer func() { out.compiling = false }()
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
		fc, err := compileField(md.Fields().Get(i), seen)
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
func (c *Message) compileMessageRules(md protoreflect.MessageDescriptor) error {
	mr, ok := proto.GetExtension(md.Options(), validate.E_Message).(*validate.MessageRules)
	if !ok || mr == nil || countSet(mr.ProtoReflect()) == 0 {
		return nil
	}
	if countSet(mr.ProtoReflect()) != 1 || len(mr.GetCel()) == 0 {
		return fmt.Errorf("%s: message rules other than CEL are not compiled", md.FullName())
	}
	for _, rule := range mr.GetCel() {
		test, ok := knownExpressions[rule.GetExpression()]
		if !ok {
			return fmt.Errorf("%s: CEL rule %s is not compiled", md.FullName(), rule.GetId())
		}
		wait, activity, mode, err := actionFields(md)
		if err != nil {
			return err
		}
		c.exprs = append(c.exprs, expr{wait: wait, activity: activity, mode: mode, test: test})
	}
	return nil
}

func compileField(fd protoreflect.FieldDescriptor, seen map[protoreflect.FullName]*Message) (*Field, error) {
	out := &Field{fd: fd}
	fr, _ := proto.GetExtension(fd.Options(), validate.E_Field).(*validate.FieldRules)
	ruled := fr != nil && countSet(fr.ProtoReflect()) > 0
	out.ruled = ruled
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
			if nested, err := compileMessage(vd.Message(), seen); err != nil || !nested.empty {
				return nil, fmt.Errorf("%s: rules inside a map are not compiled", fd.FullName())
			}
		}
	case fd.Message() != nil:
		nested, err := compileMessage(fd.Message(), seen)
		if err != nil {
			return nil, err
		}
		if !nested.empty || nested.compiling {
			out.nested = nested
		}
	}
	if !ruled && out.nested == nil {
		return nil, nil
	}
	out.list = fd.IsList()
	out.presence = !fd.IsList() && (fd.HasPresence() || fd.Message() != nil)
	return out, nil
}

// compileRules reads one field's rules, refusing any it does not know.
func (f *Field) compileRules(fd protoreflect.FieldDescriptor, fr *validate.FieldRules) error {
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

func (f *Field) compileList(fd protoreflect.FieldDescriptor, rr *validate.RepeatedRules) error {
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

func (f *Field) compileItems(fd protoreflect.FieldDescriptor, fr *validate.FieldRules) error {
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
	"string": {protoreflect.StringKind, []string{"min_len", "max_len", "min_bytes", "max_bytes", "pattern", "uuid", "in"}},
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
	out := &valueCheck{kind: fd.Kind()}
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
		if m := hexPattern.FindStringSubmatch(x); m != nil {
			c.hexLen, _ = strconv.Atoi(m[2])
			c.hexOrEmpty = m[1] != ""
		}
	case bool:
		if rule == "uuid" {
			c.uuid = x
		} else {
			c.definedOnly = x
		}
	case protoreflect.List: // enum.not_in, string.in
		if c.kind == protoreflect.StringKind {
			c.in = []string{}
			for i := range x.Len() {
				c.in = append(c.in, x.Get(i).String())
			}
			break
		}
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

// Passes reports whether m passes every rule of its message. False means
// that m breaks a rule.
//
// A message of the generated Go type the rules were bound to (goBind) is
// read on its struct, field by field, rather than through protoreflect,
// whose every read costs a type check and a reflect.Value built from the
// field's address; the rules and their verdicts are the same either way.
func (c *Message) Passes(m protoreflect.Message) bool {
	if c.goType != nil {
		if p := reflect.ValueOf(m.Interface()); p.Type() == c.goType && !p.IsNil() {
			return c.structPasses(p.Elem())
		}
	}
	return c.reflectPasses(m)
}

// PassesMessage is Passes on m, which a caller holding the message (not
// its protoreflect view) saves unwrapping: m of the bound Go type is read
// on its struct directly.
func (c *Message) PassesMessage(m proto.Message) bool {
	if p := reflect.ValueOf(m); c.goType != nil && p.Type() == c.goType && !p.IsNil() {
		return c.structPasses(p.Elem())
	}
	return c.reflectPasses(m.ProtoReflect())
}

// reflectPasses is Passes on m read through protoreflect.
func (c *Message) reflectPasses(m protoreflect.Message) bool {
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
	for i := range c.exprs {
		if !c.exprs[i].passes(m) {
			return false
		}
	}
	return true
}

// Empty reports whether neither the message nor any message it holds has a
// rule.
func (c *Message) Empty() bool { return c.empty }

// Fields are the message's fields that have rules or hold a message with
// rules, in the message's field order.
func (c *Message) Fields() []Field { return c.fields }

// RequiredOneofs are the message's oneofs that must have a member set.
func (c *Message) RequiredOneofs() []protoreflect.OneofDescriptor { return c.oneofs }

// HasExpressions reports whether the message has CEL rules of its own
// (which Passes evaluates on the message).
func (c *Message) HasExpressions() bool { return len(c.exprs) > 0 }

// Descriptor is the field's descriptor.
func (f *Field) Descriptor() protoreflect.FieldDescriptor { return f.fd }

// Required reports whether the field must be set (a message or a field
// with presence) or non-zero (a field without presence).
func (f *Field) Required() bool { return f.required }

// Presence reports whether the field's rules apply only when it is set; a
// field without presence is checked as it is, its zero value too. A list
// has none: its rules apply always.
func (f *Field) Presence() bool { return f.presence }

// Nested are the rules of the message the field (or each of its items)
// holds, nil when it has none.
func (f *Field) Nested() *Message { return f.nested }

// HasItemRules reports whether a list's items have rules of their own
// (items, unique), beyond the message each holds.
func (f *Field) HasItemRules() bool { return f.items != nil || f.unique }

// ValuePasses reports whether v, the value of the singular field, passes
// the rules on its value.
func (f *Field) ValuePasses(v protoreflect.Value) bool {
	return f.value == nil || f.value.passes(v)
}

// LenPasses reports whether a list of n items passes min_items and
// max_items.
func (f *Field) LenPasses(n int) bool {
	return (f.minItems == nil || uint64(n) >= *f.minItems) && (f.maxItems == nil || uint64(n) <= *f.maxItems)
}

// readsValue reports whether a singular field's value is checked, given
// whether the field is set (has; asked only when asksHas); when it is not,
// ok is the field's verdict. A field without presence (nor a rule that
// asks) is read as it is: its zero value is checked too.
func (f *Field) readsValue(has bool) (read, ok bool) {
	if has || !f.asksHas() {
		return true, true
	}
	return false, !f.required
}

// asksHas reports whether a singular field's verdict depends on whether it
// is set.
func (f *Field) asksHas() bool { return f.required || f.presence }

func (f *Field) passes(m protoreflect.Message) bool {
	fd := f.fd
	if f.list {
		if !m.Has(fd) {
			return f.emptyListPasses()
		}
		return f.listPasses(m.Get(fd).List())
	}
	if read, ok := f.readsValue(f.asksHas() && m.Has(fd)); !read {
		return ok
	}
	if f.nested != nil && !f.nested.Passes(m.Get(fd).Message()) {
		return false
	}
	return f.ValuePasses(m.Get(fd))
}

// emptyListPasses reports whether an empty list passes: only required and
// a minimum fail it.
func (f *Field) emptyListPasses() bool { return !f.required && f.LenPasses(0) }

func (f *Field) listPasses(l protoreflect.List) bool {
	if !f.LenPasses(l.Len()) {
		return false
	}
	for i := range l.Len() {
		v := l.Get(i)
		if f.nested != nil && !f.nested.Passes(v.Message()) {
			return false
		}
		if f.items != nil && !f.items.passes(v) {
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

// passes reports whether a value of the field passes the rules.
func (c *valueCheck) passes(v protoreflect.Value) bool {
	switch c.kind {
	case protoreflect.StringKind:
		return c.stringPasses(v.String())
	case protoreflect.EnumKind:
		return c.enumPasses(v.Enum())
	case protoreflect.DoubleKind:
		return c.doublePasses(v.Float())
	default:
		return c.uintPasses(v.Uint())
	}
}

func (c *valueCheck) doublePasses(x float64) bool {
	return (c.dgte == nil || x >= *c.dgte) && (c.dlte == nil || x <= *c.dlte) // NaN fails both
}

func (c *valueCheck) uintPasses(n uint64) bool {
	return (c.ugte == nil || n >= *c.ugte) && (c.ulte == nil || n <= *c.ulte) && (c.uconst == nil || n == *c.uconst)
}

func (c *valueCheck) stringPasses(s string) bool {
	if c.minLen != nil || c.maxLen != nil {
		// A string has at least as many bytes as characters and at most
		// utf8.UTFMax times as many: its byte length settles the bounds
		// without counting, unless it lies near one.
		b := uint64(len(s))
		if c.minLen != nil && b < *c.minLen {
			return false
		}
		if c.maxLen != nil && b > *c.maxLen || c.minLen != nil && b/utf8.UTFMax < *c.minLen {
			n := uint64(utf8.RuneCountInString(s))
			if c.minLen != nil && n < *c.minLen || c.maxLen != nil && n > *c.maxLen {
				return false
			}
		}
	}
	if n := uint64(len(s)); c.minBytes != nil && n < *c.minBytes || c.maxBytes != nil && n > *c.maxBytes {
		return false
	}
	if c.pattern != nil && !c.matches(s) {
		return false
	}
	if c.in != nil && !slices.Contains(c.in, s) {
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

// hexPattern recognises the patterns of fixed-length lowercase hex (a
// SHA-256), alone or optional.
var hexPattern = regexp.MustCompile(`^\^(\()?\[0-9a-f\]\{([0-9]+)\}(?:\)\?)?\$$`)

// matches reports whether s matches the pattern.
func (c *valueCheck) matches(s string) bool {
	if c.hexLen == 0 {
		return c.matched.match(c.pattern, s)
	}
	if s == "" && c.hexOrEmpty {
		return true
	}
	if len(s) != c.hexLen {
		return false
	}
	for i := range len(s) {
		if hexDigit[s[i]]&lowerHex == 0 {
			return false
		}
	}
	return true
}

// hexDigit classes each byte: lowerHex for 0-9 and a-f, anyHex for those
// and A-F.
var hexDigit = func() (t [256]uint8) {
	for _, b := range "0123456789abcdef" {
		t[b] = lowerHex | anyHex
	}
	for _, b := range "ABCDEF" {
		t[b] = anyHex
	}
	return t
}()

const (
	lowerHex = 1 << iota
	anyHex
)

// matchCache holds up to maxMatched values a pattern matched, in a map
// replaced whole on each addition: a value is looked up far more often than
// added (the cache fills up once), and a plain map's string lookup is
// cheaper than a sync.Map's.
type matchCache struct {
	values atomic.Pointer[map[string]struct{}]
	mu     sync.Mutex // held by an addition
}

const maxMatched = 256

func (c *matchCache) match(re *regexp.Regexp, s string) bool {
	if values := c.values.Load(); values != nil {
		if _, ok := (*values)[s]; ok {
			return true
		}
	}
	if !re.MatchString(s) {
		return false
	}
	c.add(s)
	return true
}

// add adds s unless the cache is full.
func (c *matchCache) add(s string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	old := c.values.Load()
	if old != nil && len(*old) >= maxMatched {
		return
	}
	next := make(map[string]struct{}, 1+lenOf(old))
	if old != nil {
		for v := range *old {
			next[v] = struct{}{}
		}
	}
	next[s] = struct{}{}
	c.values.Store(&next)
}

func lenOf(m *map[string]struct{}) int {
	if m == nil {
		return 0
	}
	return len(*m)
}

// isUUID reports whether s is a UUID in its canonical text form (hex digits
// of either case in groups of 8-4-4-4-12), as protovalidate's string.uuid.
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := range len(s) {
		b := s[i]
		switch i {
		case 8, 13, 18, 23:
			if b != '-' {
				return false
			}
		default:
			if hexDigit[b]&anyHex == 0 {
				return false
			}
		}
	}
	return true
}
