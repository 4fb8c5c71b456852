package sqlstore

import (
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"
)

// The arrays encode exactly as pgx encodes the plain slices they replace,
// in both formats: NULL for a nil array or element, an empty BYTEA for an
// empty element.
func TestArrays_EncodeAsPgxEncodesThePlainSlices(t *testing.T) {
	m := pgtype.NewMap()
	for _, bs := range [][][]byte{nil, {}, {[]byte("k")}, {[]byte("wf:r:ckpt"), {}, nil, []byte("\x00\xff%:")}} {
		for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
			want, err := m.Encode(pgtype.ByteaArrayOID, format, bs, nil)
			require.NoError(t, err)
			got, err := m.Encode(pgtype.ByteaArrayOID, format, byteaArray(bs), nil)
			require.NoError(t, err)
			require.Equal(t, want, got, "%q format %d", bs, format)
		}
	}
	for _, ns := range [][]int64{nil, {}, {1}, {-1, 0, 1 << 40, -1 << 62}} {
		for _, format := range []int16{pgtype.BinaryFormatCode, pgtype.TextFormatCode} {
			want, err := m.Encode(pgtype.Int8ArrayOID, format, ns, nil)
			require.NoError(t, err)
			got, err := m.Encode(pgtype.Int8ArrayOID, format, int8Array(ns), nil)
			require.NoError(t, err)
			require.Equal(t, want, got, "%v format %d", ns, format)
		}
	}
}

// A group's keys and values are encoded without an allocation per element.
func TestArrays_EncodeWithoutAnAllocationPerElement(t *testing.T) {
	m := pgtype.NewMap()
	bs := make([][]byte, 100)
	ns := make([]int64, 100)
	for i := range bs {
		bs[i], ns[i] = []byte("wf:0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e:ev:000000000000001"), int64(1<<40+i)
	}
	buf := make([]byte, 0, 1<<16)
	_, _ = m.Encode(pgtype.ByteaArrayOID, pgtype.BinaryFormatCode, byteaArray(bs), buf) // plans are cached
	_, _ = m.Encode(pgtype.Int8ArrayOID, pgtype.BinaryFormatCode, int8Array(ns), buf)
	allocs := testing.AllocsPerRun(10, func() {
		_, _ = m.Encode(pgtype.ByteaArrayOID, pgtype.BinaryFormatCode, byteaArray(bs), buf[:0])
		_, _ = m.Encode(pgtype.Int8ArrayOID, pgtype.BinaryFormatCode, int8Array(ns), buf[:0])
	})
	require.Less(t, allocs, 20.0, "a plain [][]byte boxes each of its 100 elements")
}
