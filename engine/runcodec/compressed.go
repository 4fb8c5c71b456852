package runcodec

import (
	"errors"
	"fmt"
	"slices"
	"sync"

	"github.com/klauspost/compress/s2"
)

// FormatCompressed is a record compressed: the rest of the value is one
// Snappy block (github.com/klauspost/compress/s2's Snappy-compatible
// encoding, so any Snappy decoder reads it) whose decoded bytes are the
// record in its own format, format byte first. Only checkpoints are
// stored so, and only when that is shorter: a checkpoint is rewritten by
// every decision of its run, and repeats its run id, its worker ids and
// its timestamps' leading bytes from step to step.
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

// appendCompressed appends record, a stored record (its format byte
// first), to b: compressed (FormatCompressed) when that is shorter, else
// as it is.
func appendCompressed(b, record []byte) []byte {
	if len(record) < minCompressed {
		return append(b, record...)
	}
	start := len(b)
	n := s2.MaxEncodedLen(len(record))
	b = slices.Grow(b, 1+n)
	b = append(b, FormatCompressed)
	block := s2.EncodeSnappyBetter(b[len(b):len(b)+n], record)
	if 1+len(block) >= len(record) {
		return append(b[:start], record...)
	}
	return b[:len(b)+len(block)]
}

// decompressed answers the record a compressed one (its format byte
// first) holds, in new memory: decoded values may refer to it.
func decompressed(b []byte) ([]byte, error) {
	n, err := s2.DecodedLen(b[1:])
	if err != nil {
		return nil, fmt.Errorf("compressed record: %w", err)
	}
	if n > maxDecompressed {
		return nil, fmt.Errorf("compressed record: decodes to %d bytes, more than %d", n, maxDecompressed)
	}
	out, err := s2.Decode(make([]byte, n), b[1:])
	if err != nil {
		return nil, fmt.Errorf("compressed record: %w", err)
	}
	if len(out) > 0 && out[0] == FormatCompressed {
		return nil, errNestedCompression
	}
	return out, nil
}
