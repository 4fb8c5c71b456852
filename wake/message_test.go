package wake_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/wake"
)

func TestMessage_RoundTrips(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		origin string
		keys   []string
	}{
		{"no keys", "o", nil},
		{"empty origin", "", []string{"k"}},
		{"queue and run keys", "\x8f\x01abc", []string{"tenant\x00default", "run\x01run-0192"}},
		{"empty key and any bytes", "o", []string{"", "\xff\x00\x01", "a:b:c"}},
		{"long key", "o", []string{string(make([]byte, 300))}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			origin, keys, err := wake.Decode(wake.Encode(tc.origin, tc.keys))
			require.NoError(t, err)
			require.Equal(t, tc.origin, origin)
			require.Equal(t, tc.keys, keys)
		})
	}
}

func TestMessage_MalformedBytesAreRefused(t *testing.T) {
	t.Parallel()
	good := wake.Encode("origin", []string{"key-1", "key-2"})
	for _, tc := range []struct {
		name string
		msg  []byte
	}{
		{"empty", nil},
		{"other header", []byte("hello")},
		{"other version", append([]byte("wk\x02"), good[3:]...)},
		{"truncated key", good[:len(good)-1]},
		{"truncated length", append([]byte("wk\x01\x01o"), 0x80)},
		{"length past the end", []byte("wk\x01\x01o\x05ab")},
		{"overlong length", []byte("wk\x01\x80\x00")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := wake.Decode(tc.msg)
			require.ErrorIs(t, err, wake.ErrMalformed)
		})
	}
}

func FuzzDecode(f *testing.F) {
	f.Add(wake.Encode("origin", []string{"tenant\x00q", "run\x01r"}))
	f.Add([]byte("wk\x01"))
	f.Add([]byte("wk\x01\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"))
	f.Fuzz(func(t *testing.T, msg []byte) {
		origin, keys, err := wake.Decode(msg)
		if err != nil {
			return
		}
		// What decodes re-encodes to the same bytes: one message, one meaning.
		require.Equal(t, msg, wake.Encode(origin, keys))
	})
}
