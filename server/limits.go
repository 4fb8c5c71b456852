package server

import (
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"strings"
)

// limitMessages refuses a request message over maxBytes with the
// PAYLOAD_TOO_LARGE fault, on every protocol, as the fault table maps it.
//
// Connect enforces the same limit (connect.WithReadMaxBytes) but refuses
// with resource_exhausted and no Fault, before any interceptor runs. This
// reader runs first: it fails the read that would pass the limit with a
// *connect.Error carrying the Fault, which Connect sends as it is. A unary
// body (Connect unary, HTTP/JSON) is the message; an enveloped body (gRPC,
// gRPC-Web, Connect streaming) is refused at the prefix of a message that
// declares more than maxBytes. A message that inflates past the limit after
// decompression is left to the decompressor (compression.go).
//
// JSON-RPC bodies are envelopes of calls, not messages: the JSON-RPC
// handler bounds them itself, and each call it forwards comes back through
// here.
func limitMessages(next http.Handler, maxBytes int64) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == JSONRPCPath || r.Body == nil || r.Body == http.NoBody {
			next.ServeHTTP(w, r)
			return
		}
		r2 := *r
		if enveloped(r.Header.Get("Content-Type")) {
			r2.Body = &frameLimit{body: r.Body, limit: maxBytes}
		} else {
			r2.Body = &unaryLimit{body: r.Body, limit: maxBytes, remaining: maxBytes}
		}
		next.ServeHTTP(w, &r2)
	})
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

// frameLimit passes enveloped messages through, holding each 5-byte prefix
// back until it has checked the length it declares.
type frameLimit struct {
	body      io.ReadCloser
	limit     int64
	prefix    [5]byte
	pending   []byte // checked prefix bytes not yet handed out
	remaining int64  // message bytes of the current envelope not yet handed out
	err       error  // the error to answer once pending is handed out
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
	return n, tooLarge(err)
}

// nextPrefix reads and checks the next envelope's prefix, then hands it out.
func (f *frameLimit) nextPrefix(p []byte) (int, error) {
	n, err := io.ReadFull(f.body, f.prefix[:])
	switch {
	case n == 0 && err != nil:
		return 0, tooLarge(err) // io.EOF: the body ended between envelopes
	case err != nil:
		// A truncated prefix: hand out what came, then end as the body did,
		// so Connect reports the incomplete envelope as it would.
		f.pending, f.err = f.prefix[:n], tooLarge(err)
		if errors.Is(err, io.ErrUnexpectedEOF) {
			f.err = io.EOF
		}
		return f.Read(p)
	}
	size := int64(binary.BigEndian.Uint32(f.prefix[1:]))
	if size > f.limit {
		f.err = newPayloadTooLarge("the request message", f.limit)
		return 0, f.err
	}
	f.pending, f.remaining = f.prefix[:], size
	return f.Read(p)
}

func (f *frameLimit) Close() error { return f.body.Close() }
