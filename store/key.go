package store

import (
	"encoding/hex"
	"fmt"
	"strings"
	"time"
)

// The key codec. A key is one or more components joined by Separator. Inside a
// component the escape byte and the separator are escaped, and every other
// byte is kept as is, so keys stay readable (wf:{id}:ckpt) while the encoding
// stays reversible:
//
//	'%' (0x25) → "%25"
//	':' (0x3A) → "%3A"
//
// Decoding accepts exactly these two escapes (upper case) and nothing else, so
// every valid key has one decoding and every component tuple one encoding:
// two different tuples never share a key, whatever bytes they hold.
//
// Numbers that must sort (run sequences, scheduled times) are encoded as
// fixed-width lower-case hex ([Uint64], [Int64], [Time]), so byte order equals
// numeric order. String components carry no ordering promise.
const (
	// Separator joins key components.
	Separator = ':'
	// Escape introduces a two-hex-digit escape inside a component.
	Escape = '%'
)

// Key encodes components into a key. At least one component is required; a
// call with none returns an empty key, which no store accepts.
func Key(components ...string) []byte {
	if len(components) == 0 {
		return nil
	}
	return appendKey(make([]byte, 0, keyLen(components)), components)
}

// AppendKey appends the encoded components of a key to b, as Key encodes
// them: a caller that writes a key's leading bytes itself (a registry of
// prefixes) builds the key in the one buffer.
func AppendKey(b []byte, components ...string) []byte { return appendKey(b, components) }

// appendKey appends the encoded components to b.
func appendKey(b []byte, components []string) []byte {
	for i, c := range components {
		if i > 0 {
			b = append(b, Separator)
		}
		b = appendEscaped(b, c)
	}
	return b
}

// keyLen answers the length of the key Key encodes components into, so
// that a key is built in one allocation.
func keyLen(components []string) int {
	n := len(components) - 1
	for _, c := range components {
		n += len(c)
		for i := 0; i < len(c); i++ {
			if c[i] == Escape || c[i] == Separator {
				n += 2
			}
		}
	}
	return n
}

// KeyPrefix returns the prefix shared by every key whose leading components
// are exactly components: the encoded components followed by Separator. Scan
// with it to list the children of a key without matching siblings whose last
// component merely starts the same way.
func KeyPrefix(components ...string) []byte {
	if len(components) == 0 {
		return []byte{Separator}
	}
	return append(appendKey(make([]byte, 0, keyLen(components)+1), components), Separator)
}

// SplitKey decodes a key into its components. It fails on an empty key and on
// any escape other than %25 and %3A.
func SplitKey(key []byte) ([]string, error) {
	if len(key) == 0 {
		return nil, invalidf("empty key has no components")
	}
	parts := strings.Split(string(key), string(Separator))
	for i, p := range parts {
		c, err := UnescapeComponent(p)
		if err != nil {
			return nil, fmt.Errorf("key %q component %d: %w", key, i, err)
		}
		parts[i] = c
	}
	return parts, nil
}

// EscapeComponent returns the encoded form of one component.
func EscapeComponent(c string) string { return string(appendEscaped(nil, c)) }

// UnescapeComponent decodes one encoded component.
func UnescapeComponent(s string) (string, error) {
	if !strings.ContainsRune(s, Escape) {
		if strings.ContainsRune(s, Separator) {
			return "", invalidf("component contains an unescaped separator")
		}
		return s, nil
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case Separator:
			return "", invalidf("component contains an unescaped separator")
		case Escape:
			if i+2 >= len(s) {
				return "", invalidf("truncated escape at byte %d", i)
			}
			switch s[i+1 : i+3] {
			case "25":
				b.WriteByte(Escape)
			case "3A":
				b.WriteByte(Separator)
			default:
				return "", invalidf("invalid escape %q at byte %d", s[i:i+3], i)
			}
			i += 2
		default:
			b.WriteByte(s[i])
		}
	}
	return b.String(), nil
}

func appendEscaped(b []byte, c string) []byte {
	if strings.IndexByte(c, Escape) < 0 && strings.IndexByte(c, Separator) < 0 {
		return append(b, c...) // the common case: nothing to escape, copied at once
	}
	for i := 0; i < len(c); i++ {
		switch c[i] {
		case Escape:
			b = append(b, "%25"...)
		case Separator:
			b = append(b, "%3A"...)
		default:
			b = append(b, c[i])
		}
	}
	return b
}

// Uint64 encodes n as a 16-digit lower-case hex component whose byte order is
// n's numeric order. It is small enough for the compiler to inline, and Int64
// and Time with it (Time just), so that the component of a key built at
// once lives on the builder's stack rather than in an allocation of its own
// (TestNumericComponents_AllocateNothingInsideAKey).
func Uint64(n uint64) string {
	var digits [16]byte
	for i := range digits { // most significant first
		digits[i] = lowerHex[n>>60]
		n <<= 4
	}
	return string(digits[:])
}

// lowerHex are the digits Uint64 writes.
const lowerHex = "0123456789abcdef"

// ParseUint64 decodes a component made by Uint64.
func ParseUint64(s string) (uint64, error) {
	if len(s) != 16 {
		return 0, invalidf("uint64 component must be 16 hex digits, got %d bytes", len(s))
	}
	var buf [8]byte
	if _, err := hex.Decode(buf[:], []byte(s)); err != nil || s != strings.ToLower(s) {
		return 0, invalidf("uint64 component %q is not lower-case hex", s)
	}
	var n uint64
	for _, x := range buf {
		n = n<<8 | uint64(x)
	}
	return n, nil
}

// Int64 encodes n as a 16-digit hex component whose byte order is n's
// numeric order, negative numbers included (the sign bit is flipped).
func Int64(n int64) string { return Uint64(uint64(n) ^ (1 << 63)) }

// ParseInt64 decodes a component made by Int64.
func ParseInt64(s string) (int64, error) {
	u, err := ParseUint64(s)
	if err != nil {
		return 0, err
	}
	return int64(u ^ (1 << 63)), nil
}

// Time encodes t as its Unix time in nanoseconds (UTC, order-preserving; the
// representable span is the years 1678 to 2262).
func Time(t time.Time) string { return Int64(t.UnixNano()) }

// ParseTime decodes a component made by Time, in UTC.
func ParseTime(s string) (time.Time, error) {
	n, err := ParseInt64(s)
	if err != nil {
		return time.Time{}, err
	}
	return time.Unix(0, n).UTC(), nil
}
