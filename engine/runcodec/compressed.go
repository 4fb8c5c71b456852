package runcodec

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
)

// FormatCompressed is a record compressed: the record's own format byte,
// then one Snappy block (github.com/klauspost/compress/s2's
// Snappy-compatible encoding, so any Snappy decoder reads it) of the rest
// of the record. Checkpoints and event groups are stored so, when that is
// shorter: a checkpoint is rewritten by every decision of its run and
// repeats its worker ids, task ids and timestamps' leading bytes from step
// to step; a group repeats its events' worker and step.
const FormatCompressed byte = 0x0b

// minCompressed is the shortest record worth compressing: below it the
// block's own header and literal tags leave too little to gain.
const minCompressed = 128

// maxDecompressed bounds what a compressed record may decode to: a value
// larger than the store's largest is corrupt, and is refused before any
// memory is given to it.
const maxDecompressed = 16 << 20

// errNestedCompression is a compressed record whose decoded bytes are
// compressed again, which no writer stores.
var errNestedCompression = errors.New("a compressed record holds a compressed record")

// maxKeptScratch bounds the scratch memory kept for the next record: a
// fan-out's checkpoint can be megabytes, and is not kept.
const maxKeptScratch = 64 << 10

// scratch holds the memory a record is encoded in before it is compressed.
var scratch = sync.Pool{New: func() any { return new([]byte) }}

// appendEncodedCompressed appends to b the record encode appends (its
// format byte first) to the memory it is given, compressed when that is
// shorter (appendCompressed).
func appendEncodedCompressed(b []byte, encode func([]byte) []byte) []byte {
	p := scratch.Get().(*[]byte)
	raw := encode((*p)[:0])
	b = appendCompressed(b, raw)
	if cap(raw) <= maxKeptScratch {
		*p = raw
		scratch.Put(p)
	}
	return b
}

// appendCompressed appends record, a stored record (its format byte
// first), to b: compressed (FormatCompressed) when that is shorter, else
// as it is. It uses s2's plain Snappy encoder: on the records a run
// writes (a few hundred bytes) its "better" mode took 2.6 times as long
// and came out no shorter (docs/performance.md, "Ideas measured and not
// kept").
func appendCompressed(b, record []byte) []byte {
	if len(record) < minCompressed {
		return append(b, record...)
	}
	start := len(b)
	n := s2.MaxEncodedLen(len(record) - 1)
	b = slices.Grow(b, 2+n)
	b = append(b, FormatCompressed, record[0])
	block := s2.EncodeSnappy(b[len(b):len(b)+n], record[1:])
	if 2+len(block) >= len(record) {
		return append(b[:start], record...)
	}
	return b[:len(b)+len(block)]
}

// Format answers a stored record's format byte: for a compressed record
// (FormatCompressed), that of the record it holds; 0 for no value.
func Format(b []byte) byte {
	if f := compressedFormat(b); f != 0 {
		return f
	}
	if len(b) == 0 {
		return 0
	}
	return b[0]
}

// compressedFormat answers the format of the record a compressed one
// holds (0: b is not compressed).
func compressedFormat(b []byte) byte {
	if len(b) < 2 || b[0] != FormatCompressed {
		return 0
	}
	return b[1]
}

// decompressed answers the record a compressed one holds, its format byte
// first, in new memory: decoded values may refer to it.
func decompressed(b []byte) ([]byte, error) {
	if len(b) < 2 {
		return nil, errors.New("compressed record: no format")
	}
	if b[1] == FormatCompressed {
		return nil, errNestedCompression
	}
	n, err := s2.DecodedLen(b[2:])
	if err != nil {
		return nil, fmt.Errorf("compressed record: %w", err)
	}
	if n > maxDecompressed {
		return nil, fmt.Errorf("compressed record: decodes to %d bytes, more than %d", n, maxDecompressed)
	}
	out := make([]byte, 1+n)
	out[0] = b[1]
	if _, err := s2.Decode(out[1:], b[2:]); err != nil {
		return nil, fmt.Errorf("compressed record: %w", err)
	}
	return out, nil
}
