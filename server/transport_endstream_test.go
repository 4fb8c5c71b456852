package server

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConnectStreamingCompressedEndStream_IsCompletedWithTheFault: Connect
// gzips an end-of-stream message of compressMinBytes or more; its error must
// still be completed with the Fault and the correlation id (and its details'
// debug JSON in proto field names), so the answer is sent inflated.
func TestConnectStreamingCompressedEndStream_IsCompletedWithTheFault(t *testing.T) {
	t.Parallel()
	end := []byte(`{"error":{"code":"invalid_argument","message":"` + strings.Repeat("m", 2*compressMinBytes) + `"}}`)
	var zipped bytes.Buffer
	zw := gzip.NewWriter(&zipped)
	_, err := zw.Write(end)
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	env := make([]byte, 5, 5+zipped.Len())
	env[0] = 0x03 // end of stream, compressed
	binary.BigEndian.PutUint32(env[1:], uint32(zipped.Len()))
	env = append(env, zipped.Bytes()...)

	rec := httptest.NewRecorder()
	w := &faultWriter{ResponseWriter: rec, id: "the-correlation-id"}
	w.Header().Set("Content-Type", "application/connect+json")
	w.Header().Set("Connect-Content-Encoding", "gzip")
	w.WriteHeader(http.StatusOK)
	// Written in two pieces, as a stream may be.
	_, err = w.Write(env[:7])
	require.NoError(t, err)
	_, err = w.Write(env[7:])
	require.NoError(t, err)
	w.finish()

	out := rec.Body.Bytes()
	require.GreaterOrEqual(t, len(out), 5)
	require.Equal(t, byte(0x02), out[0], "sent as an uncompressed end-of-stream message")
	require.Equal(t, len(out)-5, int(binary.BigEndian.Uint32(out[1:5])))
	require.Contains(t, string(out[5:]), `"correlation_id":"the-correlation-id"`)
	require.Contains(t, string(out[5:]), `"code":"invalid_argument"`)
}

// TestConnectStreamingEndStreamThatDoesNotInflate_PassesThrough: a compressed
// end-of-stream message that is not gzip is sent as Connect wrote it.
func TestConnectStreamingEndStreamThatDoesNotInflate_PassesThrough(t *testing.T) {
	t.Parallel()
	env := []byte{0x03, 0, 0, 0, 3, 'a', 'b', 'c'}
	rec := httptest.NewRecorder()
	w := &faultWriter{ResponseWriter: rec, id: "id"}
	w.Header().Set("Content-Type", "application/connect+json")
	w.Header().Set("Connect-Content-Encoding", "gzip")
	w.WriteHeader(http.StatusOK)
	_, err := w.Write(env)
	require.NoError(t, err)
	w.finish()
	require.Equal(t, env, rec.Body.Bytes())
}
