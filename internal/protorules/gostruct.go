package protorules

import (
	"math"
	"reflect"
	"strconv"
	"strings"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// goBind binds the compiled rules of md to the generated Go struct of its
// message, when every field they read is a plain field of it (no member of
// a real oneof) of the Go type protobuf generates for the field's kind;
// otherwise c keeps no goType and is read through protoreflect. A message
// it holds is bound, or not, on its own.
func (c *Message) goBind(md protoreflect.MessageDescriptor) {
	if len(c.oneofs) > 0 {
		return
	}
	mt, err := protoregistry.GlobalTypes.FindMessageByName(md.FullName())
	if err != nil || mt.Descriptor() != md {
		return
	}
	t := reflect.TypeOf(mt.Zero().Interface())
	if t.Kind() != reflect.Pointer || t.Elem().Kind() != reflect.Struct {
		return
	}
	index := goFieldIndexes(t.Elem())
	at := func(fd protoreflect.FieldDescriptor) (int, bool) {
		i, ok := index[fd.Number()]
		if !ok || fd.IsMap() || fd.ContainingOneof() != nil && !fd.ContainingOneof().IsSynthetic() {
			return 0, false
		}
		sf := t.Elem().Field(i)
		return i, sf.IsExported() && goShapeOf(fd, sf.Type)
	}
	for i := range c.fields {
		f := &c.fields[i]
		var ok bool
		if f.goIndex, ok = at(f.fd); !ok {
			return
		}
	}
	for i := range c.exprs {
		e := &c.exprs[i]
		for j, fd := range []protoreflect.FieldDescriptor{e.wait, e.activity, e.mode} {
			var ok bool
			if e.goIndex[j], ok = at(fd); !ok {
				return
			}
		}
	}
	c.goType = t
}

// goFieldIndexes answers the index of each field of a generated struct by
// its field number, read from its protobuf struct tag ("bytes,1,opt,...").
func goFieldIndexes(st reflect.Type) map[protoreflect.FieldNumber]int {
	out := map[protoreflect.FieldNumber]int{}
	for i := range st.NumField() {
		parts := strings.Split(st.Field(i).Tag.Get("protobuf"), ",")
		if len(parts) < 2 {
			continue
		}
		if n, err := strconv.Atoi(parts[1]); err == nil {
			out[protoreflect.FieldNumber(n)] = i
		}
	}
	return out
}

// goShapeOf reports whether t is the Go type protobuf generates for fd: a
// slice for a list, a pointer for a message and for a scalar with presence,
// the scalar itself otherwise.
func goShapeOf(fd protoreflect.FieldDescriptor, t reflect.Type) bool {
	switch {
	case fd.IsList():
		return t.Kind() == reflect.Slice && goElemOf(fd, t.Elem())
	case fd.Message() == nil && fd.HasPresence():
		return t.Kind() == reflect.Pointer && goElemOf(fd, t.Elem())
	}
	return goElemOf(fd, t)
}

// goScalarKinds are the Go kinds of the scalar field kinds.
var goScalarKinds = map[protoreflect.Kind]reflect.Kind{
	protoreflect.BoolKind: reflect.Bool, protoreflect.EnumKind: reflect.Int32,
	protoreflect.Int32Kind: reflect.Int32, protoreflect.Sint32Kind: reflect.Int32, protoreflect.Sfixed32Kind: reflect.Int32,
	protoreflect.Int64Kind: reflect.Int64, protoreflect.Sint64Kind: reflect.Int64, protoreflect.Sfixed64Kind: reflect.Int64,
	protoreflect.Uint32Kind: reflect.Uint32, protoreflect.Fixed32Kind: reflect.Uint32,
	protoreflect.Uint64Kind: reflect.Uint64, protoreflect.Fixed64Kind: reflect.Uint64,
	protoreflect.FloatKind: reflect.Float32, protoreflect.DoubleKind: reflect.Float64,
	protoreflect.StringKind: reflect.String,
}

// goElemOf reports whether t is the Go type of one value of fd.
func goElemOf(fd protoreflect.FieldDescriptor, t reflect.Type) bool {
	switch {
	case fd.Message() != nil:
		return t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct
	case fd.Kind() == protoreflect.BytesKind:
		return t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8
	}
	k, ok := goScalarKinds[fd.Kind()]
	return ok && t.Kind() == k
}

// structPasses is Passes on sv, a message of c.goType's struct.
func (c *Message) structPasses(sv reflect.Value) bool {
	for i := range c.fields {
		if !c.fields[i].goPasses(sv) {
			return false
		}
	}
	for i := range c.exprs {
		if !c.exprs[i].goPasses(sv) {
			return false
		}
	}
	return true
}

// goMessagePasses is Passes on p, a pointer to a generated message: read on
// its struct when c is bound to its type, through protoreflect otherwise.
func (c *Message) goMessagePasses(p reflect.Value) bool {
	if p.Type() == c.goType && !p.IsNil() {
		return c.structPasses(p.Elem())
	}
	return c.Passes(p.Interface().(proto.Message).ProtoReflect())
}

// goPasses is passes on sv, the struct of the field's message.
func (f *Field) goPasses(sv reflect.Value) bool {
	v := sv.Field(f.goIndex)
	if f.list {
		return f.goListPasses(v)
	}
	if read, ok := f.readsValue(f.asksHas() && goHas(v)); !read {
		return ok
	}
	if f.nested != nil && !f.nested.goMessagePasses(v) {
		return false
	}
	if f.value == nil {
		return true
	}
	if v.Kind() == reflect.Pointer { // a scalar with presence, set
		v = v.Elem()
	}
	return f.value.goPasses(v)
}

// goHas is protoreflect's Has on a singular field's Go value: a pointer is
// set when not nil, a scalar without presence when not zero (-0.0 is not).
func goHas(v reflect.Value) bool {
	switch v.Kind() {
	case reflect.Pointer:
		return !v.IsNil()
	case reflect.String, reflect.Slice:
		return v.Len() > 0
	case reflect.Bool:
		return v.Bool()
	case reflect.Int32, reflect.Int64:
		return v.Int() != 0
	case reflect.Uint32, reflect.Uint64:
		return v.Uint() != 0
	case reflect.Float32, reflect.Float64:
		return math.Float64bits(v.Float()) != 0
	}
	return true
}

func (f *Field) goListPasses(l reflect.Value) bool {
	if l.Len() == 0 {
		return f.emptyListPasses()
	}
	if !f.LenPasses(l.Len()) {
		return false
	}
	for i := range l.Len() {
		v := l.Index(i)
		if f.nested != nil && !f.nested.goMessagePasses(v) {
			return false
		}
		if f.items != nil && !f.items.goPasses(v) {
			return false
		}
		if f.unique {
			for j := range i {
				if l.Index(j).Equal(v) {
					return false
				}
			}
		}
	}
	return true
}

// goPasses is passes on v, a value of the field as its Go type.
func (c *valueCheck) goPasses(v reflect.Value) bool {
	switch c.kind {
	case protoreflect.StringKind:
		return c.stringPasses(v.String())
	case protoreflect.EnumKind:
		return c.enumPasses(protoreflect.EnumNumber(v.Int()))
	case protoreflect.DoubleKind:
		return c.doublePasses(v.Float())
	default:
		return c.uintPasses(v.Uint())
	}
}
