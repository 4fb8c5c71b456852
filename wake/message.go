package wake

import (
	"encoding/binary"
	"errors"
	"fmt"
)

// magic starts every message: "wk" and the format's version.
const magic = "wk\x01"

// ErrMalformed is what Decode answers for bytes that are not a message.
var ErrMalformed = errors.New("wake: malformed message")

// Encode answers the message that carries keys from origin, the sender's
// identity (so that a process can recognise its own messages). The format is
// "wk", a version byte (1), then origin and each key as a uvarint length and
// its bytes; keys may hold any bytes.
func Encode(origin string, keys []string) []byte {
	n := len(magic) + binary.MaxVarintLen64 + len(origin)
	for _, k := range keys {
		n += binary.MaxVarintLen64 + len(k)
	}
	b := make([]byte, 0, n)
	b = append(b, magic...)
	b = appendString(b, origin)
	for _, k := range keys {
		b = appendString(b, k)
	}
	return b
}

func appendString(b []byte, s string) []byte {
	b = binary.AppendUvarint(b, uint64(len(s)))
	return append(b, s...)
}

// Decode answers a message's origin and keys, or ErrMalformed.
func Decode(msg []byte) (origin string, keys []string, err error) {
	if len(msg) < len(magic) || string(msg[:len(magic)]) != magic {
		return "", nil, fmt.Errorf("%w: no %q header", ErrMalformed, magic)
	}
	rest := msg[len(magic):]
	origin, rest, err = readString(rest)
	if err != nil {
		return "", nil, err
	}
	for len(rest) > 0 {
		var k string
		if k, rest, err = readString(rest); err != nil {
			return "", nil, err
		}
		keys = append(keys, k)
	}
	return origin, keys, nil
}

func readString(b []byte) (string, []byte, error) {
	n, size := binary.Uvarint(b)
	if size <= 0 || n > uint64(len(b)-size) {
		return "", nil, fmt.Errorf("%w: truncated", ErrMalformed)
	}
	if size != len(binary.AppendUvarint(nil, n)) { // one length, one encoding
		return "", nil, fmt.Errorf("%w: overlong length", ErrMalformed)
	}
	end := size + int(n)
	return string(b[size:end]), b[end:], nil
}
