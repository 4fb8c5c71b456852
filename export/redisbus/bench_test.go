package redisbus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/export/redisbus"
	"github.com/weft-dev/weft/internal/redistest"
)

// BenchmarkPublisher_PublishBatch measures publishing a page of 400
// messages of one tenant (100 decisions of 4 events) in one call.
//
//	go test -run '^$' -bench PublishBatch -benchmem ./export/redisbus/
func BenchmarkPublisher_PublishBatch(b *testing.B) {
	ctx := context.Background()
	rdb := redistest.Require(b)
	pub, err := redisbus.New(rdb, redisbus.Config{StreamPrefix: redistest.Prefix(b, rdb) + "events:", MaxLen: 1000})
	require.NoError(b, err)
	msgs := make([]export.Message, 400)
	for i := range msgs {
		run := fmt.Sprintf("0195b3c2-7c1e-7e3a-9d41-%012x", i/4)
		msgs[i] = export.Message{TenantID: tenant, EventID: fmt.Sprintf("0195b3c2-7c20-7e3a-9d41-%012x", i), RunID: run,
			RunSeq: uint64(5 + i%4 + 4*(i%200)), EventType: "StepCompleted",
			Event: json.RawMessage(fmt.Sprintf(`{"event_type":"StepCompleted","event_id":"%d","run_id":%q,"data":{"output":{"n":1}}}`, i, run))}
	}
	b.ReportAllocs()
	for b.Loop() {
		n, err := pub.PublishBatch(ctx, msgs)
		if err != nil || n != len(msgs) {
			b.Fatal(n, err)
		}
	}
}
