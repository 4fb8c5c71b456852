package main

import (
	"encoding/json"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"time"
)

// kind is how a Go field is stored: the wire helpers runcodec writes and
// reads it with.
type kind int

const (
	kString  kind = iota // a string (or a named string type)
	kInt                 // a signed integer, zigzag-encoded
	kUint                // an unsigned integer
	kBool                // a boolean
	kTime                // a time.Time, as a Timestamp-like message
	kRaw                 // a json.RawMessage, as its bytes; empty is absent
	kMsg                 // a struct value, always written
	kPtrMsg              // a pointer to a struct, written when not nil
	kStrings             // a []string, one wire field per element
	kMsgs                // a []struct, one wire field per element
	kPtrMsgs             // a []*struct, one wire field per element (never nil)
)

// message is one stored message: a Go struct whose fields each carry a
// wire tag.
type message struct {
	t      reflect.Type
	fields []*field
	json   bool // its JSON field table is generated too (it is part of an event)
}

// field is one field of a message, as its tags declare it.
type field struct {
	name string // the Go field's name
	t    reflect.Type
	kind kind
	num  int
	// alt is the wire field of a compact form: a canonical UUID's 16 bytes
	// (altKind "uuid"), a lowercase SHA-256's 32 bytes ("sha256"), or a
	// claim token, {prefix}#{32 lowercase hex digits}, as the prefix's
	// bytes and then the 16 bytes of the digits ("token").
	alt     int
	altKind string
	// offset names the field this one is stored less (an integer stored as
	// the difference, so that the common equal pair writes nothing).
	offset string
	elem   *message // of the message kinds
	// The field's JSON, as encoding/json writes it: key, and whether it is
	// left out when zero (omitempty, omitzero); jsonSkip for json:"-".
	jsonKey  string
	jsonOmit bool
	jsonSkip bool
}

var (
	timeType = reflect.TypeFor[time.Time]()
	rawType  = reflect.TypeFor[json.RawMessage]()
	jsonName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)
)

// model holds the messages reachable from the roots, in the order they are
// first met.
type model struct {
	messages []*message
	byType   map[reflect.Type]*message
}

func newModel() *model { return &model{byType: map[reflect.Type]*message{}} }

func (m *model) add(t reflect.Type, withJSON bool) (*message, error) {
	if msg, ok := m.byType[t]; ok {
		if withJSON && !msg.json {
			return nil, fmt.Errorf("%s: read the messages with JSON tables first", t.Name())
		}
		return msg, nil
	}
	msg := &message{t: t, json: withJSON}
	m.byType[t] = msg
	m.messages = append(m.messages, msg)
	nums := map[int]string{}
	for i := range t.NumField() {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("wire")
		if !ok {
			return nil, fmt.Errorf("%s.%s: no wire tag (a number, or \"-\" for a field not stored)", t.Name(), sf.Name)
		}
		if tag == "-" {
			continue
		}
		f, err := m.field(sf, tag, withJSON)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t.Name(), sf.Name, err)
		}
		for _, n := range []int{f.num, f.alt} {
			if n == 0 {
				continue
			}
			if other, dup := nums[n]; dup {
				return nil, fmt.Errorf("%s.%s: wire field %d is %s's already", t.Name(), sf.Name, n, other)
			}
			nums[n] = sf.Name
		}
		msg.fields = append(msg.fields, f)
	}
	for _, f := range msg.fields {
		if f.offset == "" {
			continue
		}
		if of, ok := t.FieldByName(f.offset); !ok || of.Type.Kind() != reflect.Int || f.kind != kInt {
			return nil, fmt.Errorf("%s.%s: offset=%s must name an int field, on an int field", t.Name(), f.name, f.offset)
		}
	}
	return msg, nil
}

// field reads one field's wire tag: "N", "N,uuid=M", "N,sha256=M",
// "N,token=M" or "N,offset=Field".
func (m *model) field(sf reflect.StructField, tag string, withJSON bool) (*field, error) {
	parts := strings.Split(tag, ",")
	num, err := strconv.Atoi(parts[0])
	if err != nil || num < 1 || num > 1<<29-1 {
		return nil, fmt.Errorf("wire tag %q: the field number must be from 1 to 2^29-1", tag)
	}
	f := &field{name: sf.Name, t: sf.Type, num: num}
	for _, opt := range parts[1:] {
		key, val, _ := strings.Cut(opt, "=")
		switch key {
		case "uuid", "sha256", "token":
			if f.alt, err = strconv.Atoi(val); err != nil || f.alt < 1 {
				return nil, fmt.Errorf("wire tag %q: %s= takes a field number", tag, key)
			}
			if key == "token" && withJSON {
				return nil, fmt.Errorf("wire tag %q: token= has no JSON form (an event's message cannot hold it)", tag)
			}
			f.altKind = key
		case "offset":
			f.offset = val
		default:
			return nil, fmt.Errorf("wire tag %q: unknown option %q", tag, key)
		}
	}
	if f.kind, err = kindOf(sf.Type); err != nil {
		return nil, err
	}
	if f.alt != 0 && f.kind != kString && !(f.kind == kStrings && f.altKind == "token") {
		return nil, fmt.Errorf("wire tag %q: a compact form is of a string field (token= of a []string too)", tag)
	}
	if err := f.readJSON(sf, withJSON); err != nil {
		return nil, err
	}
	switch f.kind {
	case kMsg, kPtrMsg, kMsgs, kPtrMsgs:
		t := sf.Type
		for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice {
			t = t.Elem()
		}
		if f.elem, err = m.add(t, withJSON && !f.jsonSkip); err != nil {
			return nil, err
		}
	}
	return f, nil
}

func kindOf(t reflect.Type) (kind, error) {
	switch {
	case t == timeType:
		return kTime, nil
	case t == rawType:
		return kRaw, nil
	}
	switch t.Kind() {
	case reflect.String:
		return kString, nil
	case reflect.Int, reflect.Int64, reflect.Int32:
		return kInt, nil
	case reflect.Uint64, reflect.Uint32:
		return kUint, nil
	case reflect.Bool:
		return kBool, nil
	case reflect.Struct:
		return kMsg, nil
	case reflect.Pointer:
		if t.Elem().Kind() == reflect.Struct && t.Elem() != timeType {
			return kPtrMsg, nil
		}
	case reflect.Slice:
		e := t.Elem()
		switch {
		case e.Kind() == reflect.String:
			return kStrings, nil
		case e.Kind() == reflect.Struct && e != timeType:
			return kMsgs, nil
		case e.Kind() == reflect.Pointer && e.Elem().Kind() == reflect.Struct && e.Elem() != timeType:
			return kPtrMsgs, nil
		}
	}
	return 0, fmt.Errorf("type %s has no stored form (runcodec stores strings, integers, booleans, times, json.RawMessage, structs and slices of them)", t)
}

// readJSON reads the field's json tag as encoding/json does.
func (f *field) readJSON(sf reflect.StructField, check bool) error {
	tag := sf.Tag.Get("json")
	if tag == "-" {
		f.jsonSkip = true
		return nil
	}
	name, opts, _ := strings.Cut(tag, ",")
	if name == "" {
		name = sf.Name
	}
	if check && !jsonName.MatchString(name) {
		return fmt.Errorf("JSON name %q: runcodec's JSON writer takes names of [a-z0-9_], beginning with a letter", name)
	}
	f.jsonKey = name
	var omitEmpty, omitZero bool
	for _, o := range strings.Split(opts, ",") {
		switch o {
		case "omitempty":
			omitEmpty = true
		case "omitzero":
			omitZero = true
		case "":
		default:
			if check {
				return fmt.Errorf("json option %q: not written by runcodec's JSON writer", o)
			}
		}
	}
	// omitempty leaves out false, 0, "", a nil pointer and an empty slice,
	// never a struct (a time among them); omitzero leaves out the zero value.
	switch f.kind {
	case kTime:
		f.jsonOmit = omitZero
	case kMsg:
		if check && omitZero {
			return fmt.Errorf("json option omitzero on a struct: not written by runcodec's JSON writer")
		}
	default:
		f.jsonOmit = omitEmpty || omitZero
	}
	switch f.kind {
	case kRaw, kPtrMsg, kStrings, kMsgs, kPtrMsgs:
		if check && !f.jsonOmit {
			return fmt.Errorf("a %s is written as null when empty: runcodec's JSON writer needs it omitempty", f.t)
		}
	}
	return nil
}
