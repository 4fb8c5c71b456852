package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// gapProxy sits between the browser and weftd. On run's WatchEvents streams it
// drops the first event, so that the console sees a gap in run_seq; and it
// holds the run's ResyncRun calls until release is closed, so that the console's STALE
// state can be seen before the resync answers.
type gapProxy struct {
	run     string
	release chan struct{}
	mu      sync.Mutex
	dropped uint64 // the run_seq dropped, 0 until one is
}

func (g *gapProxy) handler(t *testing.T, target string) http.Handler {
	u, err := url.Parse(target)
	require.NoError(t, err)
	rp := httputil.NewSingleHostReverseProxy(u)
	rp.FlushInterval = -1
	rp.ModifyResponse = func(res *http.Response) error {
		if res.Request.URL.Path == "/"+weftv1connect.EventServiceName+"/WatchEvents" && res.StatusCode == http.StatusOK {
			pr, pw := io.Pipe()
			go func(body io.ReadCloser) {
				defer body.Close()
				err := g.filter(body, pw)
				if err != nil {
					t.Logf("proxy filter: %v", err)
				}
				pw.CloseWithError(err)
			}(res.Body)
			res.Body = pr
		}
		return nil
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/"+weftv1connect.EventServiceName+"/ResyncRun" {
			body, err := io.ReadAll(r.Body)
			require.NoError(t, err)
			r.Body = io.NopCloser(bytes.NewReader(body))
			req := &weftv1.ResyncRunRequest{}
			if proto.Unmarshal(body, req) == nil && req.GetRunId() == g.run {
				select {
				case <-g.release:
				case <-r.Context().Done():
					return
				}
			}
		}
		// As in the browser test's proxy: keep the request body open while
		// weftd answers (golang/go#40747).
		if err := http.NewResponseController(w).EnableFullDuplex(); err != nil {
			t.Errorf("proxy: full duplex: %v", err)
		}
		rp.ServeHTTP(w, r)
	})
}

// filter copies Connect stream envelopes from r to w, leaving out the first
// event of g.run.
func (g *gapProxy) filter(r io.Reader, w io.Writer) error {
	for {
		var head [5]byte
		if _, err := io.ReadFull(r, head[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
		data := make([]byte, binary.BigEndian.Uint32(head[1:]))
		if _, err := io.ReadFull(r, data); err != nil {
			return err
		}
		if head[0] == 0 { // an uncompressed message, not the end of the stream
			msg := &weftv1.WatchEventsResponse{}
			if err := proto.Unmarshal(data, msg); err != nil {
				return err
			}
			if g.drop(msg.GetEvent()) {
				continue
			}
		}
		if _, err := w.Write(append(head[:], data...)); err != nil {
			return err
		}
	}
}

func (g *gapProxy) drop(e *weftv1.Event) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.dropped != 0 || e.GetRunId() != g.run {
		return false
	}
	g.dropped = e.GetRunSeq()
	return true
}

func (g *gapProxy) droppedSeq() uint64 {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.dropped
}
