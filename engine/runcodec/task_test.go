package runcodec

import (
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/testkit/fill"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weft-dev/weft/engine/definition"
)

func randomTask(r *rand.Rand, full bool) *Task {
	t := &Task{}
	fill.Filler{Rand: r, Full: full}.Fill(t)
	return t
}

// engineTask is a task record as the engine writes it: the id begins with
// the run's, the token with the id.
func engineTask(r *rand.Rand) *Task {
	t := randomTask(r, false)
	t.RunID = "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e"
	t.TaskID = t.RunID + "/charge/1/a1"
	if r.IntN(2) == 0 {
		t.Token = t.TaskID + "#" + "5f0c6a1b2d3e4f5061728394a5b6c7d8"
	}
	return t
}

func TestTaskCodec_RoundTripsEveryField(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 16))
	for i := range 3000 {
		task := randomTask(r, i%3 == 0)
		if i%2 == 0 {
			task = engineTask(r)
		}
		var got Task
		require.NoError(t, DecodeTask(AppendTask(nil, task), &got))
		require.Equal(t, *task, got)
	}
}

func TestTaskCodec_IdsStoredAsSuffixesComeBackWhole(t *testing.T) {
	for _, task := range []Task{
		{RunID: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", TaskID: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e/a/1/a1",
			Token: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e/a/1/a1#ff"},
		{RunID: "run", TaskID: "run/", Token: "run/#"},    // empty suffixes are stored whole
		{RunID: "", TaskID: "/x", Token: "#y"},            // an empty run id is still a prefix
		{RunID: "r", TaskID: "other/x", Token: "other#y"}, // no prefix: stored whole
		{TaskID: "t", Token: "t#a#b"},
	} {
		var got Task
		require.NoError(t, DecodeTask(AppendTask(nil, &task), &got))
		require.Equal(t, task, got)
	}
}

func TestTaskCodec_OldJSONRecordsStillDecode(t *testing.T) {
	r := rand.New(rand.NewPCG(22, 16))
	for range 500 {
		task := randomTask(r, false)
		old, err := json.Marshal(task)
		require.NoError(t, err)
		var want, got Task
		require.NoError(t, json.Unmarshal(old, &want))
		require.NoError(t, DecodeTask(old, &got))
		require.Equal(t, want, got)
	}
	// A record as an older weftd wrote it, byte for byte.
	old := `{"version":1,"task_id":"r1/a/1/a1","run_id":"r1","tenant_id":"t","action_id":"a","kind":"activity",` +
		`"queue":"default","activity":"charge","logical_attempt":1,"engine_attempt":1,"not_before":"2026-01-02T03:04:05.123456789Z",` +
		`"seq":7,"timeout_ms":30000,"heartbeat_timeout_ms":5000,"state":"claimed","token":"r1/a/1/a1#abc","worker_id":"w1",` +
		`"claimed_at":"2026-01-02T03:04:06Z","deadline":"2026-01-02T03:04:36Z"}`
	var got Task
	require.NoError(t, DecodeTask([]byte(old), &got))
	require.Equal(t, "r1/a/1/a1#abc", got.Token)
	require.Equal(t, int64(30e9), int64(got.Timeout))
	require.Equal(t, int64(5e9), int64(got.HeartbeatTimeout))
	require.Equal(t, 123456789, got.NotBefore.Nanosecond())
	var again Task // and what it loads as is written in binary without loss
	require.NoError(t, DecodeTask(AppendTask(nil, &got), &again))
	require.Equal(t, got, again)
}

func TestTaskCodec_IsSmallerThanJSON(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 16))
	for range 200 {
		task := engineTask(r)
		old, err := json.Marshal(task)
		require.NoError(t, err)
		require.Less(t, len(AppendTask(nil, task)), len(old))
	}
	claimed := &Task{FormatVersion: 1, RunID: "0195b3c2-7c1e-7e3a-9d41-2f1a6b8c9d0e", TenantID: "tenant-a", ActionID: "charge",
		Kind: "activity", Queue: "default", Activity: "charge-card", LogicalAttempt: 1, EngineAttempt: 1, Seq: 4,
		NotBefore: time.Now().UTC(), Timeout: definition.Duration(time.Minute), State: "claimed", WorkerID: "worker-1",
		ClaimedAt: time.Now().UTC(), HeartbeatAt: time.Now().UTC(), Deadline: time.Now().UTC()}
	claimed.TaskID = claimed.RunID + "/charge/1/a1"
	claimed.Token = claimed.TaskID + "#5f0c6a1b2d3e4f5061728394a5b6c7d8"
	old, err := json.Marshal(claimed)
	require.NoError(t, err)
	require.Less(t, len(AppendTask(nil, claimed)), len(old)/2, "a claimed task as the engine writes it")
}

func TestTaskCodec_UnknownFieldsAreSkipped(t *testing.T) {
	task := randomTask(rand.New(rand.NewPCG(24, 16)), true)
	b := AppendTask(nil, task)
	b = protowire.AppendTag(b, 999, protowire.BytesType)
	b = protowire.AppendString(b, "from a newer weftd")
	var got Task
	require.NoError(t, DecodeTask(b, &got))
	require.Equal(t, *task, got)
}

func TestTaskCodec_RefusesWhatItCannotRead(t *testing.T) {
	var task Task
	for name, b := range map[string][]byte{
		"empty":           nil,
		"unknown format":  {0x7f, 1, 2},
		"truncated":       AppendTask(nil, randomTask(rand.New(rand.NewPCG(25, 16)), true))[:30],
		"wrong wire type": {FormatTask, 0x30, 0x01}, // field 6 (kind) as a varint
		"run uuid length": {FormatTask, 0xba, 0x01, 0x01, 'x'},
		"event bytes":     AppendEvent(nil, randomEvent(rand.New(rand.NewPCG(26, 16)), true)),
	} {
		require.Error(t, DecodeTask(b, &task), name)
	}
	require.ErrorIs(t, DecodeTask([]byte{FormatCheckpoint}, &task), ErrUnknownFormat)
}

func FuzzDecodeTask(f *testing.F) {
	f.Add(AppendTask(nil, randomTask(rand.New(rand.NewPCG(27, 16)), true)))
	f.Add(AppendTask(nil, engineTask(rand.New(rand.NewPCG(28, 16)))))
	f.Add([]byte(`{"version":1,"task_id":"r/a","run_id":"r","state":"ready","timeout_ms":1000}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		var task Task
		if DecodeTask(b, &task) != nil || !IsTask(b) {
			return
		}
		var again Task // what decodes re-encodes to the same value
		require.NoError(t, DecodeTask(AppendTask(nil, &task), &again))
		require.Equal(t, task, again)
	})
}
