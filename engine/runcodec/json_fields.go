package runcodec

import (
	"encoding/hex"
	"errors"
	"strconv"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The JSON encoding of an event, field by field as encoding/json writes
// runstate.Event (tags, omitempty and omitzero, string escaping, times),
// written from the stored form: each message is a table of its JSON
// fields, in the order encoding/json writes them, each with the wire
// field it is read from (the tables, eventJSON and the messages it holds,
// are generated into fields_gen.go from runstate's tags). A property test holds the JSON written from
// AppendEvent's bytes and json.Marshal's of the event byte for byte
// together.

// jsonKind is how a field's wire value becomes JSON.
type jsonKind uint8

const (
	jsonString   jsonKind = iota // a string
	jsonUUID                     // a UUID's 16 bytes, written as its text (uuidString)
	jsonSHA256                   // a SHA-256's 32 bytes, written as lowercase hex (sha256String)
	jsonUint                     // an unsigned integer
	jsonInt                      // a signed integer, zigzag-encoded
	jsonBool                     // a boolean
	jsonTime                     // a time, as time.Time's MarshalJSON writes it
	jsonRaw                      // raw JSON (a json.RawMessage); empty is absent
	jsonMessage                  // a nested message (a struct, or a pointer to one)
	jsonStrings                  // a repeated string: one wire field per element
	jsonMessages                 // a repeated message: one wire field per element
)

// jsonField is one JSON field of a message.
type jsonField struct {
	key  string // "name": as written
	num  protowire.Number
	kind jsonKind
	// alt is the wire field of the field's compact form (a UUID's or a
	// SHA-256's bytes), read as altKind; 0 when it has none.
	alt     protowire.Number
	altKind jsonKind
	// omit leaves the field out when it is zero (omitempty, omitzero, a nil
	// pointer, an empty slice).
	omit bool
	msg  *jsonMessageFields // of a message kind
}

// jsonMessageFields is a message's JSON fields, in the order they are written.
type jsonMessageFields struct {
	fields []jsonField
	// at holds, by wire field number, 1 + the index of the field it is
	// read into (0: a field this writer does not know).
	at []uint8
	// required holds, by index, the index of the first field from there on
	// that is written even when zero (len(fields): none).
	required []int
}

func jsonMessageOf(fields ...jsonField) *jsonMessageFields {
	m := &jsonMessageFields{fields: fields, required: make([]int, len(fields)+1)}
	m.required[len(fields)] = len(fields)
	for i := len(fields) - 1; i >= 0; i-- {
		m.required[i] = m.required[i+1]
		if !fields[i].omit {
			m.required[i] = i
		}
	}
	for i, f := range fields {
		for _, n := range []protowire.Number{f.num, f.alt} {
			if n == 0 {
				continue
			}
			for int(n) >= len(m.at) {
				m.at = append(m.at, 0)
			}
			m.at[n] = uint8(i + 1)
		}
	}
	return m
}

// index answers the index of the field wire field n is read into, or -1.
func (m *jsonMessageFields) index(n protowire.Number) int {
	if n < 0 || int(n) >= len(m.at) {
		return -1
	}
	return int(m.at[n]) - 1
}

// errNotCanonical is a message whose fields are not each written once, in
// the order of its JSON fields, as AppendEvent writes them: a field
// repeated (which a reader merges or overwrites) or out of order. Such a
// message is decoded and encoded again before its JSON is written.
var errNotCanonical = errors.New("fields not in their written order")

// appendJSON appends the JSON of the message whose wire fields are wire,
// read as decodeEvent reads them. It answers errNotCanonical for fields
// that are not as AppendEvent writes them, and what a reader would for
// fields it cannot read.
//
// env, when not nil, notes the envelope's fields (of an event's message).
func (m *jsonMessageFields) appendJSON(b, wire []byte, env *envelopeFields) ([]byte, error) {
	b = append(b, '{')
	first := true
	next := 0 // the first field neither written nor passed
	open := -1
	var f field
	for len(wire) > 0 {
		rest, err := f.read(wire)
		if err != nil {
			return b, err
		}
		wire = rest
		if env != nil {
			env.note(&f)
		}
		i := m.index(f.n)
		if i < 0 {
			continue // a field this writer does not know
		}
		fd := &m.fields[i]
		kind := fd.kind
		if f.n == fd.alt {
			kind = fd.altKind
		}
		if i < next {
			if i != open { // written, or passed, already
				return b, errNotCanonical
			}
			b = append(b, ',')
			if b, err = fd.appendElem(b, &f); err != nil {
				return b, err
			}
			continue
		}
		if open >= 0 {
			b = append(b, ']')
			open = -1
		}
		if m.required[next] < i {
			if b, err = m.appendZeros(b, &first, next, i); err != nil {
				return b, err
			}
		}
		next = i + 1
		if kind == jsonStrings || kind == jsonMessages {
			b = appendJSONKey(b, &first, fd.key)
			b = append(b, '[')
			if b, err = fd.appendElem(b, &f); err != nil {
				return b, err
			}
			open = i
			continue
		}
		if b, err = fd.appendValue(b, &first, kind, &f); err != nil {
			return b, err
		}
		if env != nil && kind == jsonUUID {
			env.idText = b[len(b)-37 : len(b)-1] // the id as just written, in quotes
		}
	}
	if open >= 0 {
		b = append(b, ']')
	}
	b, err := m.appendZeros(b, &first, next, len(m.fields))
	if err != nil {
		return b, err
	}
	return append(b, '}'), nil
}

// appendZeros appends the fields from..to-1, absent from the wire, that
// are written even when zero.
func (m *jsonMessageFields) appendZeros(b []byte, first *bool, from, to int) ([]byte, error) {
	var err error
	for i := m.required[from]; i < to; i = m.required[i+1] {
		fd := &m.fields[i]
		b = appendJSONKey(b, first, fd.key)
		switch fd.kind {
		case jsonString:
			b = append(b, `""`...)
		case jsonUint, jsonInt:
			b = append(b, '0')
		case jsonBool:
			b = append(b, "false"...)
		case jsonTime:
			b, err = appendJSONTime(b, time.Time{})
		case jsonMessage:
			b, err = fd.msg.appendJSON(b, nil, nil)
		default:
			err = errors.New("runcodec: a field of this kind is never written when zero")
		}
		if err != nil {
			return b, err
		}
	}
	return b, nil
}

// appendValue appends the field from its wire value f, read as kind, unless
// it is zero and omitted when zero.
func (fd *jsonField) appendValue(b []byte, first *bool, kind jsonKind, f *field) ([]byte, error) {
	switch kind {
	case jsonString:
		s, err := f.bytes()
		if err != nil || (fd.omit && len(s) == 0) {
			return b, err
		}
		b = appendJSONKey(b, first, fd.key)
		return appendJSONString(b, s), nil
	case jsonUUID:
		x, err := f.bytes()
		if err == nil && len(x) != 16 {
			_, err = uuidString(x)
		}
		if err != nil {
			return b, err
		}
		b = appendJSONKey(b, first, fd.key)
		return append(appendUUID(append(b, '"'), x), '"'), nil
	case jsonSHA256:
		x, err := f.bytes()
		if err == nil && len(x) != 32 {
			_, err = sha256String(x)
		}
		if err != nil {
			return b, err
		}
		b = appendJSONKey(b, first, fd.key)
		return append(hex.AppendEncode(append(b, '"'), x), '"'), nil
	case jsonUint:
		x, err := f.uint()
		if err != nil || (fd.omit && x == 0) {
			return b, err
		}
		return strconv.AppendUint(appendJSONKey(b, first, fd.key), x, 10), nil
	case jsonInt:
		x, err := f.int()
		if err != nil || (fd.omit && int(x) == 0) {
			return b, err
		}
		return strconv.AppendInt(appendJSONKey(b, first, fd.key), int64(int(x)), 10), nil
	case jsonBool:
		x, err := f.bool()
		if err != nil || (fd.omit && !x) {
			return b, err
		}
		return strconv.AppendBool(appendJSONKey(b, first, fd.key), x), nil
	case jsonTime:
		t, err := f.time()
		if err != nil || (fd.omit && t.IsZero()) {
			return b, err
		}
		return appendJSONTime(appendJSONKey(b, first, fd.key), t)
	case jsonRaw:
		x, err := f.bytes()
		if err != nil || len(x) == 0 { // empty is absent
			return b, err
		}
		return appendJSONRaw(appendJSONKey(b, first, fd.key), x)
	case jsonMessage:
		x, err := f.bytes()
		if err != nil {
			return b, err
		}
		return fd.msg.appendJSON(appendJSONKey(b, first, fd.key), x, nil)
	}
	return b, errors.New("runcodec: a repeated field is written element by element")
}

// appendElem appends one element of a repeated field: every element is
// written, even an empty string.
func (fd *jsonField) appendElem(b []byte, f *field) ([]byte, error) {
	x, err := f.bytes()
	if err != nil {
		return b, err
	}
	if fd.kind == jsonMessages {
		return fd.msg.appendJSON(b, x, nil)
	}
	return appendJSONString(b, x), nil
}

// appendUUID appends a UUID's 16 bytes in its canonical text form (8-4-4-4-12
// lower-case hex digits): the one writer of an event id, stored or as JSON.
func appendUUID(b, x []byte) []byte {
	var out [36]byte
	hex.Encode(out[0:8], x[0:4])
	out[8] = '-'
	hex.Encode(out[9:13], x[4:6])
	out[13] = '-'
	hex.Encode(out[14:18], x[6:8])
	out[18] = '-'
	hex.Encode(out[19:23], x[8:10])
	out[23] = '-'
	hex.Encode(out[24:36], x[10:16])
	return append(b, out[:]...)
}

// envelopeFields are the wire fields of an event's envelope, as
// appendJSON read them.
type envelopeFields struct {
	typ, id, runID []byte
	idText         []byte // the text of an id read as a UUID's bytes
	seq            uint64
}

func (e *envelopeFields) note(f *field) {
	switch f.n {
	case 1:
		e.typ = f.v
	case 2:
		e.id = f.v
	case 3:
		e.runID = f.v
	case 4:
		e.seq = f.x
	}
}

// envelope answers the envelope of an event whose wire fields appendJSON
// wrote whole, each once.
func (e *envelopeFields) envelope() EventEnvelope {
	id := e.id
	if e.idText != nil {
		id = e.idText
	}
	return EventEnvelope{Type: e.typ, RunID: e.runID, Seq: e.seq, ID: string(id)}
}
