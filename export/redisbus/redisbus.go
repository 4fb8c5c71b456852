// Package redisbus is the Redis Streams event bus of the cluster deployment:
// an export.Publisher that appends each event to its tenant's stream,
// weft:events:{tenant} (the tenant escaped like a store key component: '%'
// as %25 and ':' as %3A), with XADD MAXLEN ~ so a stream stays bounded. Each
// entry has the fields event_id, run_id, run_seq (decimal), event_type and
// event (the engine.Event JSON). Readers use consumer groups (CreateGroup)
// and must deduplicate by event_id or (run_id, run_seq): delivery is at least
// once.
//
// Layering: it imports export, store (for the key escaping) and
// github.com/redis/go-redis/v9; weftd opens its client with internal/redisconn.
package redisbus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/weft-dev/weft/export"
	"github.com/weft-dev/weft/store"
)

// Defaults of Config.
const (
	// DefaultStreamPrefix starts every stream name.
	DefaultStreamPrefix = "weft:events:"
	// DefaultMaxLen bounds each stream (approximately: MAXLEN ~).
	DefaultMaxLen = 1_000_000
)

// Stream fields.
const (
	FieldEventID   = "event_id"
	FieldRunID     = "run_id"
	FieldRunSeq    = "run_seq"
	FieldEventType = "event_type"
	FieldEvent     = "event"
)

// Config configures a Publisher.
type Config struct {
	// StreamPrefix starts every stream name; a tenant's stream is
	// StreamPrefix + the escaped tenant id.
	StreamPrefix string
	// MaxLen bounds each stream: XADD trims it to about MaxLen entries. The
	// oldest entries go first, read or not.
	MaxLen int64
}

// WithDefaults returns c with zero fields set to their defaults.
func (c Config) WithDefaults() Config {
	if c.StreamPrefix == "" {
		c.StreamPrefix = DefaultStreamPrefix
	}
	if c.MaxLen == 0 {
		c.MaxLen = DefaultMaxLen
	}
	return c
}

func (c Config) validate() error {
	if c.MaxLen < 1 {
		return fmt.Errorf("redisbus: stream max length must be at least 1, got %d", c.MaxLen)
	}
	return nil
}

// Publisher publishes to Redis Streams, one stream per tenant.
type Publisher struct {
	rdb redis.UniversalClient
	cfg Config
}

var _ export.Publisher = (*Publisher)(nil)

// New answers a publisher on rdb, which the caller owns.
func New(rdb redis.UniversalClient, cfg Config) (*Publisher, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if rdb == nil {
		return nil, errors.New("redisbus: a publisher needs a Redis client")
	}
	return &Publisher{rdb: rdb, cfg: cfg}, nil
}

// Stream answers the stream name of a tenant.
func (p *Publisher) Stream(tenantID string) string {
	return p.cfg.StreamPrefix + store.EscapeComponent(tenantID)
}

// Publish implements export.Publisher with one XADD. Failures of Redis as a
// whole (connection, timeout, LOADING, OOM, READONLY, …) wrap
// export.ErrUnavailable; an error reply about the command itself does not.
func (p *Publisher) Publish(ctx context.Context, msg export.Message) error {
	if msg.TenantID == "" {
		return errors.New("redisbus: message has no tenant, so no stream")
	}
	err := p.rdb.XAdd(ctx, &redis.XAddArgs{
		Stream: p.Stream(msg.TenantID),
		MaxLen: p.cfg.MaxLen,
		Approx: true,
		Values: []any{FieldEventID, msg.EventID, FieldRunID, msg.RunID,
			FieldRunSeq, msg.RunSeq, FieldEventType, msg.EventType,
			FieldEvent, []byte(msg.Event)},
	}).Err()
	if err != nil {
		return classify(fmt.Errorf("redisbus: XADD %s: %w", p.Stream(msg.TenantID), err))
	}
	return nil
}

var _ export.BatchPublisher = (*Publisher)(nil)

// publishScript appends messages to their streams in order, one XADD each,
// and stops at the first Redis refuses: KEYS are the streams, each once,
// ARGV[1] the MAXLEN, then six values per message: the index of its
// stream in KEYS and its five field values. It answers {published} or
// {published, the refusal}.
var publishScript = redis.NewScript(fmt.Sprintf(`
local n = 0
for a = 2, #ARGV, 6 do
  local r = redis.pcall('XADD', KEYS[tonumber(ARGV[a])], 'MAXLEN', '~', ARGV[1], '*',
    %q, ARGV[a + 1], %q, ARGV[a + 2], %q, ARGV[a + 3], %q, ARGV[a + 4], %q, ARGV[a + 5])
  if type(r) == 'table' and r.err then
    return {n, r.err}
  end
  n = n + 1
end
return {n}
`, FieldEventID, FieldRunID, FieldRunSeq, FieldEventType, FieldEvent))

// PublishBatch implements export.BatchPublisher: the messages go to Redis in
// one script call, which stops at the first XADD Redis refuses, so nothing
// after a refused message is published. On a Redis Cluster, where one script
// reaches the keys of one slot only, each run of consecutive messages to one
// stream is a call of its own.
func (p *Publisher) PublishBatch(ctx context.Context, msgs []export.Message) (int, error) {
	done := 0
	for done < len(msgs) {
		group := p.group(msgs[done:])
		if len(group) == 0 {
			return done, errors.New("redisbus: message has no tenant, so no stream")
		}
		n, err := p.publishGroup(ctx, group)
		done += n
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// group answers the first messages that one script call may take: up to one
// with no tenant (which has no stream), and on a Redis Cluster those to the
// first message's stream only.
func (p *Publisher) group(msgs []export.Message) []export.Message {
	_, cluster := p.rdb.(*redis.ClusterClient)
	for i, m := range msgs {
		if m.TenantID == "" || (cluster && m.TenantID != msgs[0].TenantID) {
			return msgs[:i]
		}
	}
	return msgs
}

// publishGroup runs the script over msgs.
func (p *Publisher) publishGroup(ctx context.Context, msgs []export.Message) (int, error) {
	a := batchArgsPool.Get().(*batchArgs)
	defer a.release()
	keys, args := a.fill(p, msgs)
	res, err := publishScript.Run(ctx, p.rdb, keys, args...).Slice()
	if err != nil {
		return 0, classify(fmt.Errorf("redisbus: XADD of %d messages: %w", len(msgs), err))
	}
	n, ok := int64(-1), len(res) > 0
	if ok {
		n, ok = res[0].(int64)
	}
	switch {
	case ok && len(res) == 1 && n == int64(len(msgs)):
		return len(msgs), nil
	case ok && len(res) == 2 && n >= 0 && n < int64(len(msgs)):
		reply, _ := res[1].(string)
		return int(n), fmt.Errorf("redisbus: XADD %s: %w", p.Stream(msgs[n].TenantID), classify(replyError(reply)))
	}
	return 0, export.Unavailable(fmt.Errorf("redisbus: the publish script's answer is not a count of %d messages", len(msgs)))
}

// batchArgs is what one script call is given, in memory a later call
// reuses (a pool: a publisher may be called by several passes at once).
// Each message's values are binArgs, whose pointers go into the arguments
// without an allocation each, as strings, a []byte and most uint64s would
// not; each stream is one key, which the client boxes once.
type batchArgs struct {
	keys []string
	args []any
	bin  []binArg
	buf  []byte // the messages' ids, types and numbers, which bin refers to
	key  int    // the index in keys of the message's stream being filled
}

var batchArgsPool = sync.Pool{New: func() any { return new(batchArgs) }}

// binArg is an argument the client writes as the bytes it holds (it
// writes an encoding.BinaryMarshaler so).
type binArg struct{ b []byte }

func (a *binArg) MarshalBinary() ([]byte, error) { return a.b, nil }

// fill answers the script's keys and arguments for msgs: their streams,
// each once, then MAXLEN and six values per message (publishScript), the
// numbers in decimal as the client writes them.
func (a *batchArgs) fill(p *Publisher, msgs []export.Message) ([]string, []any) {
	size := 0
	for _, m := range msgs {
		size += len(m.EventID) + len(m.RunID) + len(m.EventType) + 2*20 // 20: a uint64's digits
	}
	a.buf = slices.Grow(a.buf[:0], size)
	a.bin = slices.Grow(a.bin[:0], 6*len(msgs))
	a.keys = a.keys[:0]
	a.args = append(slices.Grow(a.args[:0], 1+6*len(msgs)), p.cfg.MaxLen)
	for i, m := range msgs {
		if i == 0 || m.TenantID != msgs[i-1].TenantID { // a page's messages are mostly one tenant's
			a.keys = append(a.keys, p.Stream(m.TenantID))
			if k := slices.Index(a.keys[:len(a.keys)-1], a.keys[len(a.keys)-1]); k >= 0 {
				a.keys = a.keys[:len(a.keys)-1]
				a.key = k
			} else {
				a.key = len(a.keys) - 1
			}
		}
		a.add(a.number(uint64(a.key + 1)))
		a.add(a.copied(m.EventID))
		a.add(a.copied(m.RunID))
		a.add(a.number(m.RunSeq))
		a.add(a.copied(m.EventType))
		a.add(m.Event)
	}
	return a.keys, a.args
}

// number answers x in decimal, in a.buf.
func (a *batchArgs) number(x uint64) []byte {
	start := len(a.buf)
	a.buf = strconv.AppendUint(a.buf, x, 10)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// copied answers s copied into a.buf.
func (a *batchArgs) copied(s string) []byte {
	start := len(a.buf)
	a.buf = append(a.buf, s...)
	return a.buf[start:len(a.buf):len(a.buf)]
}

// add appends b as the next argument.
func (a *batchArgs) add(b []byte) {
	a.bin = append(a.bin, binArg{b})
	a.args = append(a.args, &a.bin[len(a.bin)-1])
}

// release gives a back to the pool, keeping nothing of the messages (their
// JSON is the worker's memory).
func (a *batchArgs) release() {
	clear(a.bin)
	clear(a.args)
	batchArgsPool.Put(a)
}

// replyError is an error reply of a command inside the script, so that
// classify tells Redis being unavailable (OOM, READONLY, …) from a refusal.
type replyError string

func (e replyError) Error() string { return string(e) }

// RedisError marks it as a Redis error reply (redis.Error).
func (replyError) RedisError() {}

// CreateGroup creates a consumer group on a tenant's stream (creating the
// stream if needed), reading from start ("$" for new events only, "0" for
// everything retained). A group that exists already is not an error.
func (p *Publisher) CreateGroup(ctx context.Context, tenantID, group, start string) error {
	err := p.rdb.XGroupCreateMkStream(ctx, p.Stream(tenantID), group, start).Err()
	if err != nil && !redis.HasErrorPrefix(err, "BUSYGROUP") {
		return fmt.Errorf("redisbus: create group %s on %s: %w", group, p.Stream(tenantID), err)
	}
	return nil
}

// classify marks errors of Redis as a whole as export.ErrUnavailable.
func classify(err error) error {
	var reply redis.Error
	if !errors.As(err, &reply) {
		return export.Unavailable(err) // network, pool, timeout, closed client
	}
	switch {
	case redis.IsLoadingError(err), redis.IsReadOnlyError(err), redis.IsClusterDownError(err),
		redis.IsTryAgainError(err), redis.IsMasterDownError(err), redis.IsMaxClientsError(err),
		redis.IsOOMError(err), redis.IsNoReplicasError(err), redis.IsAuthError(err),
		redis.IsPermissionError(err), redis.HasErrorPrefix(err, "BUSY"):
		return export.Unavailable(err)
	}
	return err
}

// ParseMessage turns a stream entry back into a message (for readers and
// tests). The tenant is not in the entry: it is the stream's.
func ParseMessage(values map[string]any) (export.Message, error) {
	str := func(k string) string { s, _ := values[k].(string); return s }
	seq, err := strconv.ParseUint(str(FieldRunSeq), 10, 64)
	if err != nil {
		return export.Message{}, fmt.Errorf("redisbus: run_seq %q: %w", str(FieldRunSeq), err)
	}
	return export.Message{EventID: str(FieldEventID), RunID: str(FieldRunID), RunSeq: seq,
		EventType: str(FieldEventType), Event: []byte(str(FieldEvent))}, nil
}
