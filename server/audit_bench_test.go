package server

import (
	"context"
	"testing"

	"connectrpc.com/connect"

	"github.com/weft-dev/weft/audit"
	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/store/memstore"
)

// BenchmarkAudit_SubmitRun measures a submission over Connect with and
// without the audit log (its two writes) on the in-memory store.
func BenchmarkAudit_SubmitRun(b *testing.B) {
	for _, withAudit := range []bool{false, true} {
		name := "without-audit"
		if withAudit {
			name = "with-audit"
		}
		b.Run(name, func(b *testing.B) {
			cfg := engineConfig(b)
			if withAudit {
				st := memstore.New(memstore.Config{})
				b.Cleanup(func() { _ = st.Close() })
				cfg.Audit = audit.New(st, nil)
			}
			url := testServer(b, cfg)
			c := apitest.NewClients(url, apitest.Protocols[1])
			req := &weftv1.SubmitRunRequest{Definition: def(&weftv1.Action{Id: "a", Order: 1, Activity: "x"})}
			b.ResetTimer()
			for b.Loop() {
				if _, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(req)); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
