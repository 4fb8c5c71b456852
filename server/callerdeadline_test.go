package server

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	"github.com/weft-dev/weft/engine"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
	"github.com/weft-dev/weft/store"
	"github.com/weft-dev/weft/store/memstore"
)

// stallingStore holds every commit, once stalling, until its caller's
// context ends, and answers as a driver whose connection closed with the
// context may: an error that does not name the context.
type stallingStore struct {
	store.Store
	stalling atomic.Bool
}

func (s *stallingStore) Commit(ctx context.Context, b *store.Batch) (*store.CommitResult, error) {
	if s.stalling.Load() {
		<-ctx.Done()
		return nil, errors.New("stallingstore: conn closed")
	}
	return s.Store.Commit(ctx, b)
}

// syncBuffer is a log sink the server's goroutines may write at once.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) lines(t *testing.T) []map[string]any {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []map[string]any
	for _, l := range bytes.Split(bytes.TrimSpace(s.b.Bytes()), []byte("\n")) {
		if len(l) == 0 {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(l, &m))
		out = append(out, m)
	}
	return out
}

func TestCallerDeadline_IsAnsweredAndCountedAsTheCallersNeverAsAServerFault(t *testing.T) {
	for _, p := range twoProtocols {
		t.Run(p.Name, func(t *testing.T) {
			st := &stallingStore{Store: memstore.New(memstore.Config{})}
			t.Cleanup(func() { _ = st.Close() })
			eng, err := engine.New(engine.Config{Store: st})
			require.NoError(t, err)
			logs := &syncBuffer{}
			cfg := Config{Logger: slog.New(slog.NewJSONHandler(logs, nil))}.WithEngine(eng)
			c := apitest.NewClients(testServer(t, cfg), p)
			st.stalling.Store(true)
			ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
			defer cancel()
			_, err = c.Runs.SubmitRun(ctx, connect.NewRequest(&weftv1.SubmitRunRequest{
				Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}))
			require.Error(t, err)
			var failed map[string]any
			require.Eventually(t, func() bool {
				for _, l := range logs.lines(t) {
					if l["msg"] == "rpc failed" && l["procedure"] == weftv1connect.RunServiceSubmitRunProcedure {
						failed = l
						return true
					}
				}
				return false
			}, 5*time.Second, 10*time.Millisecond)
			require.Equal(t, "INFO", failed["level"], "a caller's own deadline is no server error: %v", failed)
			require.Contains(t, []any{"deadline_exceeded", "canceled"}, failed["code"], "%v", failed)
		})
	}
}

func TestWithFault_ADeadlineOrCancellationCarriesNoInternalFaultCode(t *testing.T) {
	for _, cause := range []error{context.DeadlineExceeded, context.Canceled} {
		cerr := withFault(fmt.Errorf("engine: %w", cause), "corr-1")
		f, ok := FaultOf(cerr)
		require.True(t, ok, "every error carries a Fault")
		require.Equal(t, "corr-1", f.GetCorrelationId())
		require.Equal(t, weftv1.FaultCode_FAULT_CODE_UNSPECIFIED, f.GetCode(), "%v: the Connect code (%v) says it", cause, cerr.Code())
		require.NotEqual(t, connect.CodeInternal, cerr.Code())
	}
}
