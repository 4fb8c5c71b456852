package sqlstore

import (
	"errors"

	"github.com/jackc/pgx/v5/pgproto3"
)

// sendRoom gives a connection's write buffer room for a one-round-trip
// pipeline's messages before pgconn encodes them (reserve). pgproto3's Frontend
// encodes messages by appending to its write buffer, and after a flush of
// more than 1 KiB replaces that buffer with a new 1 KiB one: every group's
// pipeline would grow it again by doubling from 1 KiB, allocating about
// twice its bytes. sendRoom is a message of no bytes whose Encode hands the
// Frontend a buffer with room for them all instead, kept from one group to
// the next.
//
// The room belongs to one connection (it lives in the connection's
// tripStatements, in pgconn's CustomData), and only that connection's
// Frontend is ever given it. The Frontend may go on using it after the
// pipeline — it keeps its buffer after a flush of at most 1 KiB, after a
// failed encoding, and the Terminate of an asynchronous close is encoded in
// it — but always for that connection, whose holder is the only one
// sending on it (no room is made on a closed connection, whose
// asynchronous close may still be sending): the next group on the connection gets it back through the
// Frontend's Send (Encode below keeps whatever the Frontend has pending), and
// a connection closed or replaced (forgetTrip) takes its room with it. The
// room is written only by the Frontend or by Encode within its Send, so two
// users never write it at once, and pgconn writes the buffer to the socket
// synchronously (net.Conn.Write), so nothing reads it once Flush returns.
// A pipeline that flushes more than once encodes what follows the first
// flush in whatever buffer the Frontend has then, as pgconn always does.
type sendRoom struct {
	buf  []byte // the connection's room, kept from group to group
	need int    // the bytes the messages about to be sent need
}

// maxRoomBytes bounds the room a connection keeps between groups; a larger
// group gets room of its own for its pipeline, not kept.
const maxRoomBytes = 1 << 20

// reserve gives f's write buffer room for need more bytes.
func (r *sendRoom) reserve(f *pgproto3.Frontend, need int) {
	r.need = need
	f.Send(r)
}

// Encode answers a buffer holding dst's bytes (what the Frontend has pending,
// normally nothing) with room for need more: dst itself when it has the
// room, else the connection's room (grown if it must be).
func (r *sendRoom) Encode(dst []byte) ([]byte, error) {
	if cap(dst)-len(dst) >= r.need {
		return dst, nil
	}
	n := len(dst) + r.need
	if n > maxRoomBytes {
		return append(make([]byte, 0, n), dst...), nil
	}
	if cap(r.buf) < n {
		r.buf = make([]byte, 0, n)
	}
	return append(r.buf[:0], dst...), nil // copies onto itself when dst is r.buf
}

// Decode is never called: sendRoom is only sent.
func (r *sendRoom) Decode([]byte) error { return errors.New("sqlstore: sendRoom is not decoded") }

// Frontend marks sendRoom as a message to the server.
func (r *sendRoom) Frontend() {}

// Messages the one-round-trip pipeline sends besides its parameters' bytes,
// bounded: per statement a Bind (its header, the statement's name, the
// format codes, a length per parameter), a Describe and an Execute; and the
// Sync. An estimate too large only leaves room unused, one too small lets
// the Frontend grow its buffer, as it would without sendRoom.
const (
	statementMessageBytes = 128
	pipelineStatements    = 5 // BEGIN, the check, the delete, the upsert, COMMIT or ROLLBACK
	syncMessageBytes      = 5
)

// pipelineBytes bounds the bytes of the messages pipelineOnce sends for the
// parameters encoded in sc.
func pipelineBytes(sc *tripScratch) int {
	n := pipelineStatements*statementMessageBytes + syncMessageBytes
	for _, enc := range sc.enc {
		n += len(enc)
	}
	return n
}
