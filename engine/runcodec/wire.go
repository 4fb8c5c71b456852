package runcodec

import (
	"errors"
	"fmt"
	"time"

	"google.golang.org/protobuf/encoding/protowire"
)

// The wire helpers: each field is a protobuf field (docs/persisted-format.md
// gives the numbers), and a zero value is not written, as proto3 has it.

func appendString(b []byte, n protowire.Number, s string) []byte {
	if s == "" {
		return b
	}
	return appendElem(b, n, s)
}

// appendElem writes s even when it is empty: an element of a repeated field.
func appendElem(b []byte, n protowire.Number, s string) []byte {
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendString(b, s)
}

func appendBytes(b []byte, n protowire.Number, v []byte) []byte {
	if len(v) == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.BytesType)
	return protowire.AppendBytes(b, v)
}

// appendInt writes a signed integer zigzag-encoded (a proto sint64).
func appendInt(b []byte, n protowire.Number, v int64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, protowire.EncodeZigZag(v))
}

func appendUint(b []byte, n protowire.Number, v uint64) []byte {
	if v == 0 {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, v)
}

func appendBool(b []byte, n protowire.Number, v bool) []byte {
	if !v {
		return b
	}
	b = protowire.AppendTag(b, n, protowire.VarintType)
	return protowire.AppendVarint(b, 1)
}

// appendTime writes a non-zero time as a message of two fields, like
// google.protobuf.Timestamp: 1 seconds since the Unix epoch (sint64), 2
// nanoseconds (uint32). Times are read back in UTC.
func appendTime(b []byte, n protowire.Number, t time.Time) []byte {
	if t.IsZero() {
		return b
	}
	return appendMessage(b, n, func(b []byte) []byte {
		b = appendInt(b, 1, t.Unix())
		return appendUint(b, 2, uint64(t.Nanosecond()))
	})
}

// appendMessage writes the fields body appends as a length-delimited field.
// The body is appended in place and moved once its length is known.
func appendMessage(b []byte, n protowire.Number, body func([]byte) []byte) []byte {
	b = protowire.AppendTag(b, n, protowire.BytesType)
	start := len(b)
	b = body(b)
	size := len(b) - start
	prefix := protowire.SizeVarint(uint64(size))
	b = append(b, make([]byte, prefix)...)
	copy(b[start+prefix:], b[start:start+size])
	protowire.AppendVarint(b[start:start], uint64(size))
	return b
}

// field is one field as read: its wire type, and its value (x for a varint,
// v for a length-delimited field).
type field struct {
	n   protowire.Number
	typ protowire.Type
	x   uint64
	v   []byte
}

var errWireType = errors.New("wrong wire type")

func (f *field) want(t protowire.Type) error {
	if f.typ != t {
		return f.wrongType()
	}
	return nil
}

func (f *field) wrongType() error { return fmt.Errorf("field %d: %w", f.n, errWireType) }

func (f *field) str() (string, error) {
	if err := f.want(protowire.BytesType); err != nil {
		return "", err
	}
	return string(f.v), nil
}

func (f *field) bytes() ([]byte, error) {
	if err := f.want(protowire.BytesType); err != nil {
		return nil, err
	}
	return f.v, nil
}

func (f *field) uint() (uint64, error) { return f.x, f.want(protowire.VarintType) }

func (f *field) int() (int64, error) {
	return protowire.DecodeZigZag(f.x), f.want(protowire.VarintType)
}

func (f *field) bool() (bool, error) { return f.x != 0, f.want(protowire.VarintType) }

func (f *field) time() (time.Time, error) {
	v, err := f.bytes()
	if err != nil {
		return time.Time{}, err
	}
	var sec, nsec int64
	err = eachField(v, func(n protowire.Number, f field) error {
		var err error
		switch n {
		case 1:
			sec, err = f.int()
		case 2:
			var u uint64
			u, err = f.uint()
			if u >= uint64(time.Second) {
				err = fmt.Errorf("field %d: nanoseconds out of range", f.n)
			}
			nsec = int64(u)
		}
		return err
	})
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(sec, nsec).UTC(), nil
}

// eachField calls fn with every field of b, in order; a field fn does not
// know is ignored by fn (readers ignore unknown fields).
func eachField(b []byte, fn func(protowire.Number, field) error) error {
	var f field
	for len(b) > 0 {
		rest, err := f.read(b)
		if err != nil {
			return err
		}
		b = rest
		if err := fn(f.n, f); err != nil {
			return err
		}
	}
	return nil
}

// read reads the first field of b onto f, and answers what follows it.
// Tags, varints and lengths of one byte, the most of them, are read here.
func (f *field) read(b []byte) ([]byte, error) {
	var m int
	if 8 <= b[0] && b[0] < 0x80 { // a field number from 1 to 15
		f.n, f.typ, m = protowire.Number(b[0]>>3), protowire.Type(b[0]&7), 1
	} else if f.n, f.typ, m = protowire.ConsumeTag(b); m < 0 {
		return nil, protowire.ParseError(m)
	}
	b = b[m:]
	f.x, f.v = 0, nil
	switch {
	case f.typ == protowire.VarintType && len(b) > 0 && b[0] < 0x80:
		f.x, m = uint64(b[0]), 1
	case f.typ == protowire.VarintType:
		f.x, m = protowire.ConsumeVarint(b)
	case f.typ == protowire.BytesType && len(b) > 0 && b[0] < 0x80 && int(b[0]) < len(b):
		f.v, m = b[1:1+b[0]:1+b[0]], 1+int(b[0])
	case f.typ == protowire.BytesType:
		f.v, m = protowire.ConsumeBytes(b)
	default:
		m = protowire.ConsumeFieldValue(f.n, f.typ, b)
	}
	if m < 0 {
		return nil, protowire.ParseError(m)
	}
	return b[m:], nil
}
