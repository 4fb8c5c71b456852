package sqlstore

import "github.com/jackc/pgx/v5/pgtype"

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
