package record

import (
	"math"
	"time"

	"github.com/weft-dev/weft/engine/keyspace"
	"github.com/weft-dev/weft/engine/runquery"
	"github.com/weft-dev/weft/store"
)

// The search index (docs/persisted-format.md, docs/semantics.md#run-queries):
// sx:{tenant}:{field}:{value}:{-created_at}:{run} for each value a run has
// of each indexed query field, and sat:{tenant}:{name} for the type of each
// search attribute a tenant has used. A value is encoded so that byte order
// is the field's order and a keyword's prefix is its encoding's prefix
// (IndexValue), so a point reads the runs of one value newest first and a
// range or STARTS_WITH reads one key range: O(matches) either way.

// SearchTypeKey holds the type of one search attribute in a tenant.
func SearchTypeKey(tenant, name string) []byte { return keyspace.SearchType.Key(tenant, name) }

// SearchTypePrefix begins every search attribute type of a tenant.
func SearchTypePrefix(tenant string) []byte { return keyspace.SearchType.KeyPrefix(tenant) }

// SearchIndexKey indexes a run under one value of one field.
func SearchIndexKey(tenant, field string, v runquery.Value, created time.Time, runID string) []byte {
	return keyspace.SearchIndex.Key(tenant, field, IndexValue(v), store.Int64(-created.UnixNano()), runID)
}

// SearchValuePrefix begins the entries of one value of a field: its runs,
// newest first. The rest of each key after it is a run index position
// (RunIndexPosition).
func SearchValuePrefix(tenant, field string, v runquery.Value) []byte {
	return keyspace.SearchIndex.KeyPrefix(tenant, field, IndexValue(v))
}

// SearchFieldPrefix begins every entry of one field of a tenant.
func SearchFieldPrefix(tenant, field string) []byte {
	return keyspace.SearchIndex.KeyPrefix(tenant, field)
}

// IndexValue encodes a value as a key component whose byte order is the
// value's order among values of its type: a keyword's bytes each as two
// letters 'a'..'p' (so no byte needs escaping, a prefix encodes as a
// prefix, and a shorter keyword sorts before a longer one it begins, the
// separator being below 'a'); an int, a time (nanoseconds) and a double
// (its IEEE bits made orderable) as 16 hex digits; a bool as 0 or 1.
func IndexValue(v runquery.Value) string {
	switch v.Type {
	case runquery.Keyword:
		b := make([]byte, 2*len(v.S))
		for i := 0; i < len(v.S); i++ {
			b[2*i], b[2*i+1] = 'a'+v.S[i]>>4, 'a'+v.S[i]&15
		}
		return string(b)
	case runquery.Int:
		return store.Int64(v.I)
	case runquery.Double:
		return store.Uint64(orderedDouble(v.F))
	case runquery.Bool:
		if v.B {
			return "1"
		}
		return "0"
	case runquery.Time:
		return store.Int64(clampNanos(v.T))
	}
	return ""
}

// orderedDouble maps a finite double to a uint64 of the same order.
func orderedDouble(f float64) uint64 {
	if f == 0 {
		f = 0 // -0 is 0
	}
	bits := math.Float64bits(f)
	if bits>>63 == 1 {
		return ^bits
	}
	return bits | 1<<63
}

// The times a key holds exactly: the nanoseconds an int64 counts from
// 1970. A search attribute's time is refused outside them; a query's
// bound outside them is clamped, which reads the same runs.
var (
	MinIndexTime = time.Unix(0, math.MinInt64).UTC()
	MaxIndexTime = time.Unix(0, math.MaxInt64).UTC()
)

func clampNanos(t time.Time) int64 {
	switch {
	case t.Before(MinIndexTime):
		return math.MinInt64
	case t.After(MaxIndexTime):
		return math.MaxInt64
	}
	return t.UnixNano()
}

// RunIndexPosition answers a run's position in the newest-first order of
// the run index and of every value's entries: the key after the prefix.
func RunIndexPosition(created time.Time, runID string) string {
	return string(store.AppendKey(nil, store.Int64(-created.UnixNano()), runID))
}
