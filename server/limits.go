package server

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"

	"connectrpc.com/connect"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// limitBody bounds the request's body: the raw body to rawMax bytes (0:
// unbounded), and each message to maxBytes, refused with the
// PAYLOAD_TOO_LARGE fault on every protocol, as the fault table maps it.
//
// Connect enforces the same message limit (connect.WithReadMaxBytes) but
// refuses with resource_exhausted and no Fault, before any interceptor runs.
// These readers run first: they fail the read that would pass the limit
// with a *connect.Error carrying the Fault, which Connect sends as it is. A
// unary body (Connect unary, HTTP/JSON) is the message; an enveloped body
// (gRPC, gRPC-Web, Connect streaming) is refused at the prefix of a message
// that declares more than maxBytes. A message that inflates past the limit
// after decompression is left to the decompressor (compression.go).
//
// The raw limit bounds a body of many messages (a stream) a little above
// the message limit; a unary body is bounded by the message limit itself,
// which lies below it, so it gets no raw limit of its own. w is the writer
// http.MaxBytesReader is told of.
//
// JSON-RPC bodies are envelopes of calls, not messages: the JSON-RPC
// handler bounds them itself, and each call it forwards comes back through
// here. r is the edge's own copy of the request (edge.go).
func (c *edgeCall) limitBody(r *http.Request, w http.ResponseWriter, maxBytes, rawMax int64) {
	isEnveloped := r.Method == http.MethodPost && enveloped(r.Header.Get("Content-Type"))
	noBody := r.Body == nil || r.Body == http.NoBody
	if !isEnveloped && !noBody && r.URL.Path != JSONRPCPath && (rawMax == 0 || maxBytes <= rawMax) {
		c.unary = unaryLimit{body: r.Body, limit: maxBytes, remaining: maxBytes}
		r.Body = &c.unary
		return
	}
	if rawMax > 0 {
		r.Body = http.MaxBytesReader(w, r.Body, rawMax)
	}
	if !isEnveloped || r.URL.Path == JSONRPCPath {
		return
	}
	body := r.Body
	if body == nil {
		body = http.NoBody // an empty body still must hold its one message
	}
	r.Body = &frameLimit{body: body, limit: maxBytes, single: strings.HasPrefix(r.URL.Path, "/weft.v1."),
		compressed: compressedStream(r.Header)}
}

// enveloped reports whether a request body is a sequence of enveloped
// messages (5-byte prefix: flags, then the big-endian length).
func enveloped(contentType string) bool {
	ct := strings.ToLower(strings.TrimSpace(contentType))
	return strings.HasPrefix(ct, "application/grpc") || strings.HasPrefix(ct, "application/connect+")
}

// tooLarge translates the outer raw-body limit (http.MaxBytesHandler) into
// the fault; other errors pass unchanged.
func tooLarge(err error) error {
	if err == nil || errors.Is(err, io.EOF) {
		return err // every read but the last: no error to translate
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return newPayloadTooLarge("the request body", mb.Limit)
	}
	return err
}

// unaryLimit hands out at most limit bytes of a body and fails the read
// past them, unless the body ends there.
type unaryLimit struct {
	body             io.ReadCloser
	limit, remaining int64
}

func (u *unaryLimit) Read(p []byte) (int, error) {
	if u.remaining <= 0 {
		var one [1]byte
		if n, err := io.ReadFull(u.body, one[:]); n == 0 {
			return 0, tooLarge(err)
		}
		return 0, newPayloadTooLarge("the request message", u.limit)
	}
	if int64(len(p)) > u.remaining {
		p = p[:u.remaining]
	}
	n, err := u.body.Read(p)
	u.remaining -= int64(n)
	return n, tooLarge(err)
}

func (u *unaryLimit) Close() error { return u.body.Close() }

// compressedStream reports whether an enveloped request declares a
// compression (gRPC's grpc-encoding, Connect streaming's
// connect-content-encoding) under which a message may be compressed.
func compressedStream(h http.Header) bool {
	for _, k := range []string{"Grpc-Encoding", "Connect-Content-Encoding"} {
		if v := h.Get(k); v != "" && !strings.EqualFold(v, "identity") {
			return true
		}
	}
	return false
}

// frameLimit passes enveloped messages through, holding each 5-byte prefix
// back until it has checked it, and refuses as invalid_argument what Connect
// would answer as an internal error or unknown: a body that ends inside a
// prefix or before the bytes a prefix declares, a prefix with flags a
// request cannot carry (or the compressed flag without a compression), and
// no message or a second one where the method takes exactly one.
type frameLimit struct {
	body       io.ReadCloser
	limit      int64
	single     bool // the method takes exactly one request message
	compressed bool // the request declares a compression
	messages   int  // prefixes handed out
	prefix     [5]byte
	pending    []byte // checked prefix bytes not yet handed out
	remaining  int64  // message bytes of the current envelope not yet handed out
	err        error  // the error to answer once pending is handed out
}

// envelopeCompressed is the only flag a request envelope may carry.
const envelopeCompressed = 0x01

// malformedEnvelope answers invalid_argument for an enveloped body that does
// not follow the protocol's framing; the fault interceptor or the transport
// layer adds the Fault and the correlation id.
func malformedEnvelope(why string) *connect.Error {
	return newFaultError(&weftv1.Fault{Code: weftv1.FaultCode_FAULT_CODE_INVALID_ARGUMENT},
		"malformed request envelope: "+why)
}

func (f *frameLimit) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	if len(f.pending) > 0 {
		n := copy(p, f.pending)
		f.pending = f.pending[n:]
		return n, nil
	}
	if f.err != nil {
		return 0, f.err
	}
	if f.remaining == 0 {
		return f.nextPrefix(p)
	}
	if int64(len(p)) > f.remaining {
		p = p[:f.remaining]
	}
	n, err := f.body.Read(p)
	f.remaining -= int64(n)
	if errors.Is(err, io.EOF) && f.remaining > 0 {
		f.err = malformedEnvelope(fmt.Sprintf("the body ended %d bytes before the end of the message its prefix declares", f.remaining))
		return n, f.err
	}
	return n, tooLarge(err)
}

// nextPrefix reads and checks the next envelope's prefix, then hands it out.
func (f *frameLimit) nextPrefix(p []byte) (int, error) {
	n, err := io.ReadFull(f.body, f.prefix[:])
	switch {
	case n == 0 && errors.Is(err, io.EOF) && f.single && f.messages == 0:
		f.err = malformedEnvelope("the method takes one request message and the body holds none")
		return 0, f.err
	case n == 0 && err != nil:
		return 0, tooLarge(err) // io.EOF: the body ended between envelopes
	case errors.Is(err, io.ErrUnexpectedEOF):
		f.err = malformedEnvelope(fmt.Sprintf("the body ended inside a 5-byte message prefix, after %d bytes", n))
		return 0, f.err
	case err != nil:
		f.err = tooLarge(err)
		return 0, f.err
	}
	f.err = f.checkPrefix()
	if f.err != nil {
		return 0, f.err
	}
	f.messages++
	f.pending, f.remaining = f.prefix[:], int64(binary.BigEndian.Uint32(f.prefix[1:]))
	return f.Read(p)
}

// checkPrefix judges the prefix just read.
func (f *frameLimit) checkPrefix() error {
	flags := f.prefix[0]
	switch {
	case f.single && f.messages > 0:
		return malformedEnvelope("the method takes one request message and the body holds more")
	case flags&^envelopeCompressed != 0:
		return malformedEnvelope(fmt.Sprintf("flags 0x%02x are not valid in a request message prefix", flags))
	case flags&envelopeCompressed != 0 && !f.compressed:
		return malformedEnvelope("a message is marked compressed but the request declares no compression")
	case int64(binary.BigEndian.Uint32(f.prefix[1:])) > f.limit:
		return newPayloadTooLarge("the request message", f.limit)
	}
	return nil
}

func (f *frameLimit) Close() error { return f.body.Close() }
