package server

import (
	"context"
	"crypto/rand"
	"net/http"
	"strings"
	"sync"

	"github.com/google/uuid"
)

// requestState is what the layers of one request share through its
// context: its correlation id, and who the caller turned out to be once the
// auth interceptor has checked its token. It is one context value, filled in
// place, rather than a context layer per fact: a worker's calls are many and
// small, and every context layer and boxed value is an allocation.
type requestState struct {
	id string
	// who is the caller; authed says the auth interceptor set it. A
	// request it did not reach has no caller (callerOf).
	who    caller
	authed bool
}

type requestStateKey struct{}

// stateOf answers the request's state, or nil outside a request.
func stateOf(ctx context.Context) *requestState {
	s, _ := ctx.Value(requestStateKey{}).(*requestState)
	return s
}

// withRequestState answers ctx carrying a new state with correlation id id,
// for a call that did not pass the edge (edgeCall holds the edge's).
func withRequestState(ctx context.Context, id string) (context.Context, *requestState) {
	s := &requestState{id: id}
	return context.WithValue(ctx, requestStateKey{}, s), s
}

// edgeCall is what the edge layer allocates for one request, in one
// allocation: the request's state and the context that carries it, the
// edge's copy of the request, its correlation header's value, the response
// writer that completes errors, and the reader that bounds a unary
// request's message. (An enveloped request's reader, a frameLimit, is
// allocated apart: the worker path's calls are unary.)
type edgeCall struct {
	ctx      stateContext
	req      http.Request
	idHeader [1]string
	fw       faultWriter
	unary    unaryLimit
}

// stateContext is a request's context with its state as the value of
// requestStateKey: context.WithValue's layer, held in the edgeCall rather
// than allocated apart. Cancellation and every other value are the parent's.
type stateContext struct {
	context.Context
	state requestState
}

func (c *stateContext) Value(key any) any {
	if _, ok := key.(requestStateKey); ok {
		return &c.state
	}
	return c.Context.Value(key)
}

// edge is the outermost layer of the API, around Connect itself
// (withTransportFaults builds it; transport.go says what it answers). It
// does in one pass, with one copy of the request, what three wrappers did
// each with its own: the correlation id and the transport's own refusals,
// the raw body's limit, and the message limit (limitBody). A request for one
// of the API's procedures goes straight to its service's handler; anything
// else goes through the mux.
type edge struct {
	next     http.Handler
	routes   map[string]http.Handler // "/pkg.Service/Method" -> the service's handler
	maxBytes int64                   // a request message's limit
	rawMax   int64                   // the raw body's limit; 0: none (a JSON-RPC call, whose envelope is bounded)
}

func (e *edge) ServeHTTP(w http.ResponseWriter, in *http.Request) {
	c := new(edgeCall)
	id := newCorrelationID()
	c.ctx.state.id, c.idHeader[0] = id, id
	w.Header()[CorrelationHeader] = c.idHeader[:]
	c.ctx.Context = in.Context()
	// WithContext's copy is made in place: the copy it answers does not
	// outlive this statement, so it is not allocated on its own.
	c.req = *in.WithContext(&c.ctx)
	r := &c.req
	if err := checkTimeoutHeaders(r); err != nil {
		_ = errorWriter.Write(w, r, withFault(err, id))
		return
	}
	if err := checkGETMessage(r); err != nil {
		_ = errorWriter.Write(w, r, withFault(err, id))
		return
	}
	fw := &c.fw
	fw.ResponseWriter, fw.id = w, id
	c.limitBody(r, fw, e.maxBytes, e.rawMax)
	next := e.routes[r.URL.Path]
	if next == nil {
		next = e.next
	}
	next.ServeHTTP(fw, r)
	fw.finish()
}

// procedureRoutes answers each procedure path of the services that
// handlers serve ("/pkg.Service/" -> handler, as the mux has them) mapped to
// its service's handler, so that a call for a procedure needs no mux
// lookup. Only exact procedure paths are listed: any other path (one the
// mux would clean or redirect) still goes through the mux.
func procedureRoutes(handlers map[string]http.Handler) map[string]http.Handler {
	routes := map[string]http.Handler{}
	for prefix, h := range handlers {
		sd, ok := serviceDescriptor(strings.Trim(prefix, "/"))
		if !ok {
			continue
		}
		for i := 0; i < sd.Methods().Len(); i++ {
			routes[prefix+string(sd.Methods().Get(i).Name())] = h
		}
	}
	return routes
}

// idPool is crypto randomness read ahead for correlation ids: one read of
// the system's generator for 64 ids instead of one a request.
var idPool struct {
	sync.Mutex
	buf  [64 * 16]byte
	left int // unused bytes at the end of buf
}

// newCorrelationID answers a new random (version 4) UUID.
func newCorrelationID() string {
	var u uuid.UUID
	idPool.Lock()
	if idPool.left == 0 {
		_, _ = rand.Read(idPool.buf[:]) // crypto/rand.Read never fails
		idPool.left = len(idPool.buf)
	}
	copy(u[:], idPool.buf[len(idPool.buf)-idPool.left:])
	idPool.left -= len(u)
	idPool.Unlock()
	u[6] = u[6]&0x0f | 0x40 // version 4
	u[8] = u[8]&0x3f | 0x80 // RFC 4122 variant
	return u.String()
}
