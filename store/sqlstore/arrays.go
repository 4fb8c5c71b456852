package sqlstore

import (
	"encoding/binary"
	"slices"

	"github.com/jackc/pgx/v5/pgtype"
)

// byteaArray is a BYTEA[] parameter that pgx encodes element by element
// without boxing each one: pgx reads an array through ArrayGetter.Index,
// which answers an interface, and a [][]byte it would reflect on and box
// element by element (one allocation per key or value of a group). Index
// answers a pointer into the slice instead, which an interface holds as it
// is. The encoding is pgx's own for a [][]byte: a nil element is NULL, an
// empty one an empty BYTEA.
type byteaArray [][]byte

func (a byteaArray) Dimensions() []pgtype.ArrayDimension {
	if a == nil {
		return nil
	}
	return []pgtype.ArrayDimension{{Length: int32(len(a)), LowerBound: 1}}
}

func (a byteaArray) Index(i int) any { return (*byteaElem)(&a[i]) }

func (a byteaArray) IndexType() any { return (*byteaElem)(nil) }

// byteaElem is one element of a byteaArray.
type byteaElem []byte

func (e *byteaElem) BytesValue() ([]byte, error) { return *e, nil }

// int8Array is an INT8[] parameter encoded like byteaArray, without boxing
// each element.
type int8Array []int64

func (a int8Array) Dimensions() []pgtype.ArrayDimension {
	if a == nil {
		return nil
	}
	return []pgtype.ArrayDimension{{Length: int32(len(a)), LowerBound: 1}}
}

func (a int8Array) Index(i int) any { return (*int8Elem)(&a[i]) }

func (a int8Array) IndexType() any { return (*int8Elem)(nil) }

// int8Elem is one element of an int8Array.
type int8Elem int64

func (e *int8Elem) Int64Value() (pgtype.Int8, error) {
	return pgtype.Int8{Int64: int64(*e), Valid: true}, nil
}

// The one-round-trip path sends its arrays already in PostgreSQL's binary
// array format (appendByteaArray, appendInt8Array): a leader builds each
// array of its group once, in a buffer it reuses from group to group
// (tripScratch), and hands it to pgconn as the parameter's bytes.

// appendArrayHeader appends the header of a one-dimensional binary array of
// n elements of type elemOID (one dimension, of length 0, when it is empty,
// as pgx encodes one).
func appendArrayHeader(buf []byte, n int, hasNull bool, elemOID uint32) []byte {
	null := uint32(0)
	if hasNull {
		null = 1
	}
	buf = binary.BigEndian.AppendUint32(buf, 1) // dimensions
	buf = binary.BigEndian.AppendUint32(buf, null)
	buf = binary.BigEndian.AppendUint32(buf, elemOID)
	buf = binary.BigEndian.AppendUint32(buf, uint32(int32(n)))
	return binary.BigEndian.AppendUint32(buf, 1) // lower bound
}

// appendByteaArray appends a as a binary BYTEA[] (empty, never NULL, when a
// is nil): a nil element is NULL.
func appendByteaArray(buf []byte, a [][]byte) []byte {
	size, hasNull := 20, false
	for _, e := range a {
		size += 4 + len(e)
		hasNull = hasNull || e == nil
	}
	buf = slices.Grow(buf, size)
	buf = appendArrayHeader(buf, len(a), hasNull, pgtype.ByteaOID)
	for _, e := range a {
		if e == nil {
			buf = binary.BigEndian.AppendUint32(buf, 0xffffffff) // -1: NULL
			continue
		}
		buf = binary.BigEndian.AppendUint32(buf, uint32(int32(len(e))))
		buf = append(buf, e...)
	}
	return buf
}

// appendInt8Array appends a as a binary INT8[].
func appendInt8Array(buf []byte, a []int64) []byte {
	buf = slices.Grow(buf, 20+12*len(a))
	buf = appendArrayHeader(buf, len(a), false, pgtype.Int8OID)
	for _, e := range a {
		buf = binary.BigEndian.AppendUint32(buf, 8)
		buf = binary.BigEndian.AppendUint64(buf, uint64(e))
	}
	return buf
}
