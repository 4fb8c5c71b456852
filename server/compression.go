package server

import (
	"compress/gzip"
	"io"

	"connectrpc.com/connect"
)

// compressMinBytes is the smallest answer the server compresses. Below it
// gzip saves a few hundred bytes, which a LAN carries in microseconds, at
// the cost of compressing and flushing on the server and inflating on the
// client, per call (docs/performance.md): the worker path's answers — a
// task, a report's ack, one event, and the Run a client awaits (a few
// steps, about 1–3 KiB) — all stay below it. Pages of runs or events and
// runs with large outputs are compressed.
const compressMinBytes = 8 << 10

// boundedGzip is the gzip codec every handler uses in place of Connect's
// default, and compresses only answers of at least compressMinBytes, at
// gzip's fastest level. Connect caps what it keeps of a decompressed message
// at the read limit, but then inflates the rest of an oversized message to
// report its size, so a 4 MiB bomb costs seconds of CPU. This decompressor
// stops with an error once a message inflates past the limit, so a bomb
// costs no more than one maximal message.
func boundedGzip(maxBytes int64) connect.HandlerOption {
	return connect.WithHandlerOptions(
		connect.WithCompression("gzip",
			func() connect.Decompressor { return &cappedGzipReader{limit: maxBytes} },
			func() connect.Compressor { return newFastGzip() },
		),
		connect.WithCompressMinBytes(compressMinBytes),
	)
}

func newFastGzip() *gzip.Writer {
	w, err := gzip.NewWriterLevel(io.Discard, gzip.BestSpeed)
	if err != nil {
		panic("gzip.BestSpeed is a valid level: " + err.Error())
	}
	return w
}

// cappedGzipReader is a gzip reader that answers the PAYLOAD_TOO_LARGE
// fault when a message inflates past limit bytes, having inflated at most
// one byte more. Connect passes the fault to the client unchanged.
type cappedGzipReader struct {
	gz        *gzip.Reader
	limit     int64
	remaining int64
}

func (r *cappedGzipReader) Read(p []byte) (int, error) {
	if r.gz == nil {
		return 0, io.ErrUnexpectedEOF
	}
	if r.remaining <= 0 {
		var one [1]byte
		if n, err := io.ReadFull(r.gz, one[:]); n == 0 {
			return 0, err // io.EOF: exactly the limit
		}
		return 0, newPayloadTooLarge("the request message", r.limit)
	}
	if int64(len(p)) > r.remaining {
		p = p[:r.remaining]
	}
	n, err := r.gz.Read(p)
	r.remaining -= int64(n)
	return n, err
}

func (r *cappedGzipReader) Reset(src io.Reader) error {
	r.remaining = r.limit
	if r.gz == nil {
		gz, err := gzip.NewReader(src)
		if err != nil {
			return err
		}
		r.gz = gz
		return nil
	}
	return r.gz.Reset(src)
}

func (r *cappedGzipReader) Close() error {
	if r.gz == nil {
		return nil
	}
	return r.gz.Close()
}
