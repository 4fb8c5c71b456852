package fill

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/weft-dev/weft/engine"
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runcodec"
	"github.com/weft-dev/weft/engine/runlog"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// Template is one completed run's records, compiled for cloning: each key
// and value is a list of literal bytes and slots (the run id, a timestamp,
// an event id, …) that Render fills in for a clone.
type Template struct {
	runID, requestID string
	createdAt        time.Time
	items            []item
	events           []eventSpec // by event-id slot
	tokens           int
	skipped          int
	// groups are items by their key's first component, in key order.
	groups [][]item
	// self is the template run's own identity: rendering it must give
	// back the template's records, byte for byte.
	self Identity
	// shared are the records the run refers to that are no run's own: its
	// plan record (pl:), which every clone refers to, written once as it is.
	shared []store.Item
}

// item is one record, compiled, and its size in the template.
type item struct {
	key, value []seg
	size       int
	// format is the binary format (runcodec) the engine stored the record
	// in, 0 for a record stored as it is compiled: the record is compiled in
	// its JSON form and rendered back into that format.
	format byte
}

// segKind says what a segment of a compiled record holds.
type segKind uint8

const (
	segLiteral   segKind = iota
	segRunID             // the run id
	segRequestID         // the run_request_id
	segEventID           // event idx's event_id
	segIdemKey           // event idx's idempotency key
	segToken             // task-claim token idx's random part
	segTimeText          // a timestamp in a value (RFC 3339, as encoding/json writes time.Time)
	segTimeKey           // a timestamp in a key component (store.Int64 of ±UnixNano)
)

type seg struct {
	kind segKind
	lit  []byte
	idx  int
	t    time.Time
	neg  bool
}

// eventSpec is what an event's idempotency key is made of, besides the run id.
type eventSpec struct {
	stepID, eventType, planVersion string
	logical, engineAttempt         int
}

// Records answers how many records a clone has.
func (t *Template) Records() int { return len(t.items) }

// Events answers how many events a clone's log holds.
func (t *Template) Events() int { return len(t.events) }

// Skipped answers how many of the template's records were left out
// (outbox entries not yet exported, and the records of the workers that
// polled, which belong to no run).
func (t *Template) Skipped() int { return t.skipped }

// Shared answers the records every clone refers to and none owns (the
// plan record), which Fill writes once.
func (t *Template) Shared() []store.Item { return t.shared }

// RunID answers the template run's id.
func (t *Template) RunID() string { return t.runID }

// CreatedAt answers the template run's creation time.
func (t *Template) CreatedAt() time.Time { return t.createdAt }

// Capture reads every record in st — which must hold the template run and
// nothing else, apart from outbox entries, poller records and the run's
// plan record — and compiles it. requestID is
// the run_request_id the run was submitted with.
func Capture(ctx context.Context, st store.Store, runID, requestID string) (*Template, error) {
	var items []store.Item
	skipped := 0
	var after []byte
	for {
		res, err := st.Scan(ctx, &store.ScanParams{After: after, Limit: 1000})
		if err != nil {
			return nil, fmt.Errorf("capture the template run: %w", err)
		}
		for _, it := range res.Items {
			if bytes.HasPrefix(it.Key, runlog.OutboxPrefix()) || bytes.HasPrefix(it.Key, engine.PollerRecordsPrefix()) {
				skipped++
				continue
			}
			items = append(items, it)
		}
		if res.Next == nil {
			break
		}
		after = res.Next
	}
	t, err := Compile(items, runID, requestID)
	if err != nil {
		return nil, err
	}
	t.skipped = skipped
	return t, nil
}

// Compile compiles a completed run's records. Every record but its plan
// record (which its clones share) must name the run (its id or its
// run_request_id) in its key; every identifier in a value must be one
// Compile knows how to renew.
func Compile(items []store.Item, runID, requestID string) (*Template, error) {
	if !plain(runID) || !plain(requestID) {
		return nil, fmt.Errorf("template run id %q and run_request_id %q must be plain (letters, digits, . _ / -)", runID, requestID)
	}
	items, shared := sharedRecords(items)
	stored := items
	items, formats, err := asJSON(items)
	if err != nil {
		return nil, err
	}
	t := &Template{runID: runID, requestID: requestID, shared: shared}
	c := &compiler{t: t, eventSlots: map[string]int{}, idemSlots: map[string]int{}, tokenSlots: map[string]int{},
		constants: map[string]bool{}}
	for _, it := range items {
		if err := c.learn(it); err != nil {
			return nil, err
		}
	}
	if t.createdAt.IsZero() {
		return nil, fmt.Errorf("template run %s: no record carries its created_at", runID)
	}
	if len(t.events) == 0 {
		return nil, fmt.Errorf("template run %s: no events", runID)
	}
	for i, it := range items {
		if !bytes.Contains(it.Key, []byte(runID)) && !bytes.Contains(it.Key, []byte(requestID)) {
			return nil, fmt.Errorf("template record %q names neither run %s nor request %s: not a record of the run", it.Key, runID, requestID)
		}
		key, err := c.compileKey(it.Key)
		if err != nil {
			return nil, err
		}
		value, err := c.compileValue(it.Key, it.Value)
		if err != nil {
			return nil, err
		}
		t.items = append(t.items, item{key: key, value: value, size: len(stored[i].Key) + len(stored[i].Value), format: formats[i]})
	}
	t.self = c.identity()
	t.groupItems()
	return t, t.check(stored)
}

// sharedRecords splits the records into the run's own and the plan
// records (pl:) its run record refers to.
func sharedRecords(items []store.Item) (own, shared []store.Item) {
	for _, it := range items {
		if bytes.HasPrefix(it.Key, keyspace.Plan.KeyPrefix()) {
			shared = append(shared, it)
		} else {
			own = append(own, it)
		}
	}
	return own, shared
}

// asJSON answers the records with every event, checkpoint and task in its JSON
// form, the form Compile reads identifiers in, and the binary format each
// was stored in (0 for a record stored as JSON).
func asJSON(items []store.Item) ([]store.Item, []byte, error) {
	out := slices.Clone(items)
	formats := make([]byte, len(items))
	for i, it := range out {
		var v any
		switch {
		case len(it.Value) > 0 && it.Value[0] == runcodec.FormatEvent:
			var ev runstate.Event
			if err := runcodec.DecodeEvent(it.Value, &ev); err != nil {
				return nil, nil, fmt.Errorf("template record %q: %w", it.Key, err)
			}
			v = &ev
		case runcodec.IsEventGroup(it.Value): // a JSON array of its events
			evs, err := runcodec.DecodeEvents(it.Value, runlog.EventKeyRun(it.Key), nil)
			if err != nil {
				return nil, nil, fmt.Errorf("template record %q: %w", it.Key, err)
			}
			v = evs
		case runcodec.IsCheckpoint(it.Value):
			var s runstate.State
			if err := runcodec.DecodeState(it.Value, &s); err != nil {
				return nil, nil, fmt.Errorf("template record %q: %w", it.Key, err)
			}
			v = &s
		case runcodec.IsTask(it.Value):
			var task runcodec.Task
			if err := runcodec.DecodeTask(it.Value, &task); err != nil {
				return nil, nil, fmt.Errorf("template record %q: %w", it.Key, err)
			}
			v = &task
		default:
			continue
		}
		b, err := json.Marshal(v)
		if err != nil {
			return nil, nil, fmt.Errorf("template record %q: %w", it.Key, err)
		}
		out[i].Value, formats[i] = b, runcodec.Format(it.Value) // rendered back compressed or not
	}
	return out, formats, nil
}

// groupItems groups the records by their first key component (wf, task,
// rs, …), in key order: Fill writes one group at a time, so that each
// commit's keys sit in one narrow range.
func (t *Template) groupItems() {
	byName := map[string][]item{}
	var names []string
	for _, it := range t.items {
		name := string(it.key[0].lit)
		if it.key[0].kind == segLiteral {
			name, _, _ = strings.Cut(name, string(store.Separator))
		}
		if _, ok := byName[name]; !ok {
			names = append(names, name)
		}
		byName[name] = append(byName[name], it)
	}
	slices.Sort(names)
	t.groups = t.groups[:0]
	for _, n := range names {
		t.groups = append(t.groups, byName[n])
	}
}

// identity answers the template run's own identity.
func (c *compiler) identity() Identity {
	id := Identity{RunID: c.t.runID, RequestID: c.t.requestID, CreatedAt: c.t.createdAt,
		EventIDs: make([]string, len(c.t.events)), Tokens: make([]string, c.t.tokens)}
	for eid, slot := range c.eventSlots {
		id.EventIDs[slot] = eid
	}
	for tok, slot := range c.tokenSlots {
		id.Tokens[slot] = tok
	}
	return id
}

// check renders the template with its own identity and compares the result
// with the records it was compiled from.
func (t *Template) check(items []store.Item) error {
	ops, _, err := t.Render(t.self, nil, nil)
	if err != nil {
		return err
	}
	for i, op := range ops {
		if !bytes.Equal(op.Key, items[i].Key) || !bytes.Equal(op.Value, items[i].Value) {
			return fmt.Errorf("template record %q does not render back to itself: fill cannot clone it faithfully", items[i].Key)
		}
	}
	return nil
}

// Identity answers the template run's own identity.
func (t *Template) Identity() Identity { return t.self }

// compiler holds what the first pass over the records learned.
type compiler struct {
	t          *Template
	eventSlots map[string]int // event id → slot
	idemSlots  map[string]int // idempotency key → event slot
	tokenSlots map[string]int // token's random part → slot
	constants  map[string]bool
}

// record is the top-level fields of a record that Compile looks at.
type record struct {
	RunID      string `json:"run_id"`
	CreatedAt  string `json:"created_at"`
	PlanSHA256 string `json:"plan_sha256"`
	Token      string `json:"token"`
	// Steps are a checkpoint's: the tokens of the claims its steps keep
	// instead of task records.
	Steps []struct {
		ClaimToken      string `json:"claim_token"`
		EndedClaimToken string `json:"ended_claim_token"`
	} `json:"steps"`
	EventType   string `json:"event_type"`
	EventID     string `json:"event_id"`
	Idem        string `json:"idempotency_key"`
	StepID      string `json:"step_id"`
	Logical     int    `json:"logical_attempt_id"`
	EngineAtt   int    `json:"engine_attempt_id"`
	PlanVersion string `json:"plan_version"`
	Data        struct {
		PlanSHA256    string `json:"plan_sha256"`
		CorrelationID string `json:"correlation_id"`
	} `json:"data"`
}

// learnToken records a task-claim token's random part, renewed in a clone.
func (c *compiler) learnToken(token string) {
	if i := strings.LastIndexByte(token, '#'); i > 0 {
		random := token[i+1:]
		if _, ok := c.tokenSlots[random]; !ok && plain(random) {
			c.tokenSlots[random] = c.t.tokens
			c.t.tokens++
		}
	}
}

// learn records the identifiers a record defines: event ids and
// idempotency keys (checked against the engine's function), task-claim
// tokens, the creation time, and the constants: the plan's digest and the
// correlation ids of the calls that reported attempts (evidence of a call,
// not a key, so a clone may repeat them).
func (c *compiler) learn(it store.Item) error {
	if len(it.Value) > 0 && it.Value[0] == '[' { // an event group's events
		var rs []json.RawMessage
		if json.Unmarshal(it.Value, &rs) != nil {
			return nil
		}
		for _, r := range rs {
			if err := c.learn(store.Item{Key: it.Key, Value: r}); err != nil {
				return err
			}
		}
		return nil
	}
	var r record
	if len(it.Value) == 0 || it.Value[0] != '{' || json.Unmarshal(it.Value, &r) != nil || r.RunID != c.t.runID {
		return nil
	}
	for _, constant := range []string{r.PlanSHA256, r.Data.PlanSHA256, r.Data.CorrelationID} {
		if constant != "" {
			c.constants[constant] = true
		}
	}
	if r.EventType != "" && r.EventID != "" {
		if err := c.learnEvent(it.Key, r); err != nil {
			return err
		}
	}
	c.learnToken(r.Token)
	for _, st := range r.Steps {
		c.learnToken(st.ClaimToken)
		c.learnToken(st.EndedClaimToken)
	}
	if r.CreatedAt != "" && r.EventType == "" {
		created, err := time.Parse(time.RFC3339Nano, r.CreatedAt)
		if err != nil {
			return fmt.Errorf("template record %q: created_at %q: %w", it.Key, r.CreatedAt, err)
		}
		if !c.t.createdAt.IsZero() && !created.Equal(c.t.createdAt) {
			return fmt.Errorf("template record %q: created_at %s differs from %s", it.Key, created, c.t.createdAt)
		}
		c.t.createdAt = created
	}
	return nil
}

func (c *compiler) learnEvent(key []byte, r record) error {
	want := runstate.IdempotencyKey(c.t.runID, r.StepID, r.Logical, r.EventType, r.PlanVersion, r.EngineAtt)
	if r.Idem != want {
		return fmt.Errorf("template event %q: idempotency key %s is not engine.IdempotencyKey's %s: the engine's key changed shape, and a clone would not be what it writes",
			key, r.Idem, want)
	}
	if !plain(r.EventID) {
		return fmt.Errorf("template event %q: event id %q is not plain", key, r.EventID)
	}
	slot := len(c.t.events)
	c.t.events = append(c.t.events, eventSpec{stepID: r.StepID, eventType: r.EventType, planVersion: r.PlanVersion,
		logical: r.Logical, engineAttempt: r.EngineAtt})
	c.eventSlots[r.EventID] = slot
	c.idemSlots[r.Idem] = slot
	return nil
}

// span is a slot found in a record's bytes.
type span struct {
	start, end int
	seg        seg
}

// compileKey finds the run's identifiers and timestamps in a key.
func (c *compiler) compileKey(key []byte) ([]seg, error) {
	spans := c.identifiers(key)
	start := 0
	for i := 0; i <= len(key); i++ {
		if i < len(key) && key[i] != store.Separator {
			continue
		}
		comp := string(key[start:i])
		if n, err := store.ParseInt64(comp); err == nil {
			switch created := c.t.createdAt.UnixNano(); {
			case near(n, created):
				spans = append(spans, span{start, i, seg{kind: segTimeKey, t: time.Unix(0, n).UTC()}})
			case near(-n, created):
				spans = append(spans, span{start, i, seg{kind: segTimeKey, t: time.Unix(0, -n).UTC(), neg: true}})
			}
		}
		start = i + 1
	}
	return segments(key, spans)
}

// near reports whether a key component's Unix nanosecond time a is one of
// the run's timestamps, given its creation b: within a day before it, or at
// most a retention's longest (ten years) and a day after it (a finished
// run's expiry, rx:, is its end plus its retention). No other fixed-width
// number in a key decodes anywhere near: sequences are small, and decode as
// times before 1678.
func near(a, b int64) bool {
	d := a - b
	return d > -int64(24*time.Hour) && d < int64(definition.MaxRetention)+int64(24*time.Hour)
}

var (
	timeText = regexp.MustCompile(`"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,9})?Z)"`)
	hexRun   = regexp.MustCompile(`[0-9a-fA-F]{32,}|[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}`)
)

// compileValue finds the run's identifiers and timestamps in a value, and
// refuses one holding an identifier it does not know.
func (c *compiler) compileValue(key, value []byte) ([]seg, error) {
	spans := c.identifiers(value)
	for _, m := range timeText.FindAllSubmatchIndex(value, -1) {
		text := string(value[m[2]:m[3]])
		ts, err := time.Parse(time.RFC3339Nano, text)
		if err != nil || ts.UTC().Format(time.RFC3339Nano) != text {
			return nil, fmt.Errorf("template record %q: timestamp %q is not in encoding/json's form", key, text)
		}
		spans = append(spans, span{m[2], m[3], seg{kind: segTimeText, t: ts.UTC()}})
	}
	segs, err := segments(value, spans)
	if err != nil {
		return nil, fmt.Errorf("template record %q: %w", key, err)
	}
	for _, s := range segs {
		if s.kind != segLiteral {
			continue
		}
		for _, id := range hexRun.FindAll(s.lit, -1) {
			if !c.constants[string(id)] {
				return nil, fmt.Errorf("template record %q holds identifier %q, which fill does not know how to renew for a clone", key, id)
			}
		}
	}
	return segs, nil
}

// identifiers finds every occurrence of the run's identifiers in b.
func (c *compiler) identifiers(b []byte) []span {
	var spans []span
	find := func(text string, s seg) {
		for off := 0; ; {
			i := bytes.Index(b[off:], []byte(text))
			if i < 0 {
				return
			}
			spans = append(spans, span{off + i, off + i + len(text), s})
			off += i + len(text)
		}
	}
	find(c.t.runID, seg{kind: segRunID})
	find(c.t.requestID, seg{kind: segRequestID})
	for id, slot := range c.eventSlots {
		find(id, seg{kind: segEventID, idx: slot})
	}
	for k, slot := range c.idemSlots {
		find(k, seg{kind: segIdemKey, idx: slot})
	}
	for tok, slot := range c.tokenSlots {
		find(tok, seg{kind: segToken, idx: slot})
	}
	return spans
}

// segments cuts b at the spans, which must not overlap.
func segments(b []byte, spans []span) ([]seg, error) {
	slices.SortFunc(spans, func(x, y span) int { return x.start - y.start })
	var out []seg
	at := 0
	for _, s := range spans {
		if s.start < at {
			return nil, fmt.Errorf("identifiers overlap at byte %d", s.start)
		}
		if s.start > at {
			out = append(out, seg{kind: segLiteral, lit: bytes.Clone(b[at:s.start])})
		}
		out = append(out, s.seg)
		at = s.end
	}
	if at < len(b) {
		out = append(out, seg{kind: segLiteral, lit: bytes.Clone(b[at:])})
	}
	return out, nil
}

// plain reports whether s needs no escaping in a key or a JSON string.
func plain(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		switch ch := s[i]; {
		case ch >= 'a' && ch <= 'z', ch >= 'A' && ch <= 'Z', ch >= '0' && ch <= '9', ch == '.', ch == '_', ch == '/', ch == '-':
		default:
			return false
		}
	}
	return true
}
