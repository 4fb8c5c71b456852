package record

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// marshalRun is the stored record as json.Marshal writes it: what EncodeRun
// answered before it wrote plain records itself.
func marshalRun(r *Run) ([]byte, error) {
	return json.Marshal(storedRun{FormatVersion: r.FormatVersion, RunID: r.RunID, TenantID: r.TenantID,
		ProjectID: r.ProjectID, EnvironmentID: r.EnvironmentID, RunRequestID: r.RunRequestID,
		SubmittedBy: r.SubmittedBy, TriggerSource: r.TriggerSource, Input: r.Input,
		PlanSHA256: r.PlanSHA256, CreatedAt: r.CreatedAt})
}

// EncodeRun writes a run record byte for byte as json.Marshal does, over
// random runs: plain values (written directly) and values json.Marshal
// escapes, compacts or refuses (left to it).
func TestEncodeRun_WritesWhatJSONMarshalWrites(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	strs := []string{"", "a", "0195f1c2-7c1e-7abc-8def-0123456789ab", "tenant-1", "alice@example.com",
		"a<b", "x&y", "q\"uote", "back\\slash", "tab\tnew\nline", "é", "\u2028", "\xff", "del\x7f", "api"}
	inputs := []json.RawMessage{nil, {}, json.RawMessage(`{}`), json.RawMessage(`{"a": 1, "b" : [1, 2]}`),
		json.RawMessage(` "s" `), json.RawMessage(`{"h":"<&>"}`), json.RawMessage(`{"u":"é\u2028"}`),
		json.RawMessage(`{"bad":`), json.RawMessage("[1,\n2]")}
	times := []time.Time{time.Date(2026, 11, 25, 5, 6, 7, 891011121, time.UTC), time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600)),
		{}, time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC)}
	pick := func() string { return strs[r.IntN(len(strs))] }
	fast := 0
	for range 20000 {
		rec := Run{FormatVersion: r.IntN(3), RunID: pick(), TenantID: pick(), ProjectID: pick(), EnvironmentID: pick(),
			RunRequestID: pick(), SubmittedBy: pick(), TriggerSource: pick(), Input: inputs[r.IntN(len(inputs))],
			PlanSHA256: pick(), CreatedAt: times[r.IntN(len(times))]}
		if r.IntN(2) == 0 { // mostly plain, so that the direct path is exercised
			rec.RunID, rec.TenantID, rec.ProjectID, rec.EnvironmentID, rec.PlanSHA256 = "r", "t", "default", "default", "abc"
			rec.RunRequestID, rec.SubmittedBy, rec.TriggerSource = "", "alice", ""
		}
		want, wantErr := marshalRun(&rec)
		got, gotErr := EncodeRun(&rec)
		if wantErr != nil {
			require.Error(t, gotErr)
			continue
		}
		require.NoError(t, gotErr)
		require.Equal(t, string(want), string(got))
		if _, ok := appendRun(&rec); ok {
			fast++
		}
	}
	require.Greater(t, fast, 2000, "the direct path was exercised")
}

// go test -bench EncodeRun -benchmem ./engine/internal/record/: a
// submission's run record (its definition is its plan record's), written
// directly and by json.Marshal.
func BenchmarkEncodeRun(b *testing.B) {
	rec := Run{FormatVersion: Version, RunID: "0195f1c2-7c1e-7abc-8def-0123456789ab", TenantID: "default", ProjectID: "default",
		EnvironmentID: "default", RunRequestID: "0195f1c2-7c1e-7abc-8def-0123456789ac", SubmittedBy: "bench",
		Input: json.RawMessage(`{"n":1}`), PlanSHA256: "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
		CreatedAt: time.Now().UTC()}
	b.Run("direct", func(b *testing.B) {
		for b.Loop() {
			_, _ = EncodeRun(&rec)
		}
	})
	b.Run("marshal", func(b *testing.B) {
		for b.Loop() {
			_, _ = marshalRun(&rec)
		}
	})
}
