package redisbus_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/export/redisbus"
	"github.com/weft-dev/weft/internal/redistest"
)

func TestPublisher_WritesOneStreamPerTenantWithTheDocumentedFields(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Require(t)
	prefix := testPrefix(t, rdb)
	pub, err := redisbus.New(rdb, redisbus.Config{StreamPrefix: prefix})
	require.NoError(t, err)
	for i, tn := range []string{"acme", "globex:eu", "acme"} {
		ev := json.RawMessage(fmt.Sprintf(`{"event_id":"e%d"}`, i))
		require.NoError(t, pub.Publish(ctx, export.Message{TenantID: tn, EventID: fmt.Sprint("e", i),
			RunID: "run-1", RunSeq: uint64(i + 1), EventType: "StepCompleted", Event: ev}))
	}
	require.Equal(t, prefix+"acme", pub.Stream("acme"))
	require.Equal(t, prefix+"globex%3Aeu", pub.Stream("globex:eu"), "a ':' in a tenant id is escaped")
	entries, err := rdb.XRange(ctx, pub.Stream("acme"), "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, entries, 2)
	require.Equal(t, map[string]any{"event_id": "e0", "run_id": "run-1", "run_seq": "1",
		"event_type": "StepCompleted", "event": `{"event_id":"e0"}`}, entries[0].Values)
	require.Len(t, readStream(t, rdb, pub.Stream("globex:eu")), 1)
}

func TestPublisher_BoundsEachStream(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Require(t)
	pub, err := redisbus.New(rdb, redisbus.Config{StreamPrefix: testPrefix(t, rdb), MaxLen: 100})
	require.NoError(t, err)
	for i := range 2000 {
		require.NoError(t, pub.Publish(ctx, export.Message{TenantID: tenant, EventID: fmt.Sprint(i), RunID: "r", RunSeq: uint64(i + 1), EventType: "X", Event: []byte(`{}`)}))
	}
	n, err := rdb.XLen(ctx, pub.Stream(tenant)).Result()
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, int64(100))
	require.Less(t, n, int64(400), "MAXLEN ~ trims to about the bound")
}

func TestPublisher_RejectsABadConfig(t *testing.T) {
	t.Parallel()
	_, err := redisbus.New(redis.NewClient(&redis.Options{}), redisbus.Config{MaxLen: -1})
	require.EqualError(t, err, "redisbus: stream max length must be at least 1, got -1")
}

func TestCreateGroup_ReadersConsumeWithAConsumerGroup(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Require(t)
	pub, err := redisbus.New(rdb, redisbus.Config{StreamPrefix: testPrefix(t, rdb)})
	require.NoError(t, err)
	require.NoError(t, pub.CreateGroup(ctx, tenant, "audit", "0"))
	require.NoError(t, pub.CreateGroup(ctx, tenant, "audit", "0"), "creating it again is not an error")
	for i := range 3 {
		require.NoError(t, pub.Publish(ctx, export.Message{TenantID: tenant, EventID: fmt.Sprint("e", i), RunID: "r", RunSeq: uint64(i + 1), EventType: "X", Event: []byte(`{}`)}))
	}
	streams, err := rdb.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "audit", Consumer: "c1",
		Streams: []string{pub.Stream(tenant), ">"}, Count: 10}).Result()
	require.NoError(t, err)
	require.Len(t, streams[0].Messages, 3)
	for _, m := range streams[0].Messages {
		require.NoError(t, rdb.XAck(ctx, pub.Stream(tenant), "audit", m.ID).Err())
	}
}

func TestPublisher_RedisDownIsUnavailable(t *testing.T) {
	t.Parallel()
	r := redistest.StartPrivate(t)
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer rdb.Close()
	pub, err := redisbus.New(rdb, redisbus.Config{})
	require.NoError(t, err)
	r.Stop()
	err = pub.Publish(context.Background(), export.Message{TenantID: tenant, EventID: "e", RunID: "r", RunSeq: 1, EventType: "X"})
	require.ErrorIs(t, err, export.ErrUnavailable)
	n, err := pub.PublishBatch(context.Background(), []export.Message{{TenantID: tenant, EventID: "e", RunID: "r", RunSeq: 1, EventType: "X"}})
	require.ErrorIs(t, err, export.ErrUnavailable)
	require.Zero(t, n)
}

// PublishBatch writes, in one call, exactly the entries Publish writes one at
// a time, in order, across tenants' streams.
func TestPublishBatch_WritesWhatPublishWritesInOrder(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Require(t)
	one, err := redisbus.New(rdb, redisbus.Config{StreamPrefix: testPrefix(t, rdb)})
	require.NoError(t, err)
	many, err := redisbus.New(rdb, redisbus.Config{StreamPrefix: testPrefix(t, rdb)})
	require.NoError(t, err)
	var msgs []export.Message
	for i := range 250 {
		msgs = append(msgs, export.Message{TenantID: []string{"acme", "globex:eu"}[i%2], EventID: fmt.Sprint("e", i),
			RunID: fmt.Sprint("run-", i%7), RunSeq: uint64(i + 1), EventType: "StepCompleted",
			Event: json.RawMessage(fmt.Sprintf(`{"event_id":"e%d","data":"%s"}`, i, "\x00 binary-safe"))})
	}
	for _, m := range msgs {
		require.NoError(t, one.Publish(ctx, m))
	}
	n, err := many.PublishBatch(ctx, msgs)
	require.NoError(t, err)
	require.Equal(t, len(msgs), n)
	for _, tn := range []string{"acme", "globex:eu"} {
		want, err := rdb.XRange(ctx, one.Stream(tn), "-", "+").Result()
		require.NoError(t, err)
		got, err := rdb.XRange(ctx, many.Stream(tn), "-", "+").Result()
		require.NoError(t, err)
		require.Len(t, got, len(want))
		for i := range want {
			require.Equal(t, want[i].Values, got[i].Values, "entry %d of %s", i, tn)
		}
	}
}

// A message Redis refuses ends the batch: those before it are published,
// none after it, and the refusal is not the bus being unavailable.
func TestPublishBatch_StopsAtTheFirstRefusal(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Require(t)
	pub, err := redisbus.New(rdb, redisbus.Config{StreamPrefix: testPrefix(t, rdb)})
	require.NoError(t, err)
	require.NoError(t, rdb.Set(ctx, pub.Stream("broken"), "not a stream", 0).Err())
	msg := func(tn string, i int) export.Message {
		return export.Message{TenantID: tn, EventID: fmt.Sprint("e", i), RunID: "r", RunSeq: uint64(i + 1), EventType: "X", Event: []byte(`{}`)}
	}
	n, err := pub.PublishBatch(ctx, []export.Message{msg("acme", 0), msg("acme", 1), msg("broken", 2), msg("acme", 3)})
	require.Equal(t, 2, n)
	require.ErrorContains(t, err, "WRONGTYPE")
	require.NotErrorIs(t, err, export.ErrUnavailable)
	got := readStream(t, rdb, pub.Stream("acme"))
	require.Len(t, got, 2, "nothing after the refused message")
	require.Equal(t, []string{"e0", "e1"}, []string{got[0].EventID, got[1].EventID})

	n, err = pub.PublishBatch(ctx, []export.Message{msg("acme", 4), msg("", 5), msg("acme", 6)})
	require.Equal(t, 1, n)
	require.EqualError(t, err, "redisbus: message has no tenant, so no stream")
	require.Len(t, readStream(t, rdb, pub.Stream("acme")), 3)
}

func TestPublisher_PublishBatchWritesTheDocumentedFieldsAsPublishDoes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rdb := redistest.Require(t)
	pub, err := redisbus.New(rdb, redisbus.Config{StreamPrefix: testPrefix(t, rdb)})
	require.NoError(t, err)
	var msgs []export.Message
	for _, seq := range []uint64{1, 255, 256, 1 << 40} { // run_seqs boxed without and with an allocation
		msgs = append(msgs, export.Message{TenantID: "acme", EventID: fmt.Sprint("e", seq), RunID: "run-1", RunSeq: seq,
			EventType: "StepCompleted", Event: json.RawMessage(fmt.Sprintf(`{"run_seq":%d}`, seq))})
	}
	n, err := pub.PublishBatch(ctx, msgs)
	require.NoError(t, err)
	require.Equal(t, len(msgs), n)
	entries, err := rdb.XRange(ctx, pub.Stream("acme"), "-", "+").Result()
	require.NoError(t, err)
	require.Len(t, entries, len(msgs))
	for i, m := range msgs {
		require.Equal(t, map[string]any{"event_id": m.EventID, "run_id": "run-1", "run_seq": fmt.Sprint(m.RunSeq),
			"event_type": "StepCompleted", "event": string(m.Event)}, entries[i].Values)
	}
}
