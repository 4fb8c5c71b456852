package runcodec

import (
	"encoding/hex"
	"math/rand/v2"
	"regexp"
	"testing"
)

var (
	canonicalUUID   = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$`)
	canonicalSHA256 = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// randomHexish answers n bytes drawn mostly from hex digits of both cases,
// with some dashes and other bytes, so that near-misses are common.
func randomHexish(r *rand.Rand, n int) string {
	const alphabet = "0123456789abcdef0123456789abcdefABCDEF-gz\x00\xff"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[r.IntN(len(alphabet))]
	}
	return string(b)
}

func TestUUIDBytes_TakesExactlyCanonicalLowercaseUUIDsAndGivesThemBackByteForByte(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := range 200000 {
		s := randomHexish(r, 36)
		if i%2 == 0 { // a well-placed dash pattern half the time
			b := []byte(s)
			b[8], b[13], b[18], b[23] = '-', '-', '-', '-'
			s = string(b)
		}
		checkUUID(t, s)
	}
	for _, s := range []string{"", "0", "00000000-0000-0000-0000-000000000000", "ffffffff-ffff-ffff-ffff-ffffffffffff",
		"FFFFFFFF-ffff-ffff-ffff-ffffffffffff", "0123456789abcdef0123456789abcdef", "01234567-89ab-cdef-0123-456789abcdeg"} {
		checkUUID(t, s)
	}
}

func checkUUID(t *testing.T, s string) {
	t.Helper()
	out, ok := uuidBytes(s)
	if want := canonicalUUID.MatchString(s); ok != want {
		t.Fatalf("uuidBytes(%q) ok = %v, want %v", s, ok, want)
	}
	if !ok {
		return
	}
	if back, err := uuidString(out[:]); err != nil || back != s {
		t.Fatalf("uuidString(uuidBytes(%q)) = %q, %v", s, back, err)
	}
}

func TestSHA256Bytes_TakesExactlyLowercaseHexOf32BytesAndGivesItBackByteForByte(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for i := range 200000 {
		n := 64
		if i%16 == 0 {
			n = r.IntN(70)
		}
		s := randomHexish(r, n)
		if i%2 == 0 { // all digits, case mixed or not
			s = hex.EncodeToString([]byte(randomHexish(r, 32)))
			if i%4 == 0 {
				b := []byte(s)
				if j := r.IntN(64); b[j] >= 'a' {
					b[j] -= 'a' - 'A'
				}
				s = string(b)
			}
		}
		out, ok := sha256Bytes(s)
		if want := canonicalSHA256.MatchString(s); ok != want {
			t.Fatalf("sha256Bytes(%q) ok = %v, want %v", s, ok, want)
		}
		if ok {
			if back, err := sha256String(out[:]); err != nil || back != s {
				t.Fatalf("sha256String(sha256Bytes(%q)) = %q, %v", s, back, err)
			}
		}
	}
}
