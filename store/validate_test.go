package store_test

import (
	"bytes"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

var casCaps = store.Capabilities{Backend: "test", ConditionalBatch: true, MaxValueBytes: 8}

func TestValidateBatch_RejectsMalformedBatches(t *testing.T) {
	t.Parallel()
	k := []byte("k")
	cases := []struct {
		name  string
		batch *store.Batch
		caps  store.Capabilities
		want  error
	}{
		{"nil batch", nil, casCaps, store.ErrInvalidArgument},
		{"empty key", &store.Batch{Ops: []store.Op{store.Put(nil, nil)}}, casCaps, store.ErrInvalidArgument},
		{"key over limit", &store.Batch{Ops: []store.Op{store.Delete(bytes.Repeat([]byte("k"), store.MaxKeyBytes+1))}}, casCaps, store.ErrInvalidArgument},
		{"duplicate op key", &store.Batch{Ops: []store.Op{store.Put(k, nil), store.Delete(k)}}, casCaps, store.ErrInvalidArgument},
		{"duplicate condition key", &store.Batch{Conditions: []store.Condition{store.IfAbsent(k), store.IfPresent(k)}}, casCaps, store.ErrInvalidArgument},
		{"version zero", &store.Batch{Conditions: []store.Condition{store.IfVersion(k, 0)}}, casCaps, store.ErrInvalidArgument},
		{"unknown op kind", &store.Batch{Ops: []store.Op{{Kind: 9, Key: k}}}, casCaps, store.ErrInvalidArgument},
		{"unknown condition kind", &store.Batch{Conditions: []store.Condition{{Kind: 9, Key: k}}}, casCaps, store.ErrInvalidArgument},
		{"value over limit", &store.Batch{Ops: []store.Op{store.Put(k, []byte("123456789"))}}, casCaps, store.ErrValueTooLarge},
		{"conditions without capability", &store.Batch{Conditions: []store.Condition{store.IfAbsent(k)}}, store.Capabilities{MaxValueBytes: 8}, store.ErrUnsupported},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.ErrorIs(t, store.ValidateBatch(tc.batch, tc.caps), tc.want)
		})
	}
}

func TestValidateBatch_AcceptsKeyBothConditionedAndWritten(t *testing.T) {
	t.Parallel()
	k := []byte("k")
	b := &store.Batch{Conditions: []store.Condition{store.IfVersion(k, 3)}, Ops: []store.Op{store.Put(k, []byte("v")), store.Put([]byte("j"), nil)}}
	require.NoError(t, store.ValidateBatch(b, casCaps))
}

func TestValueTooLargeError_NamesKeySizeAndLimitButNoValue(t *testing.T) {
	t.Parallel()
	secret := []byte("SECRET!!!")
	err := store.ValidateBatch(&store.Batch{Ops: []store.Op{store.Put([]byte("wf:1"), secret)}}, casCaps)
	var tooLarge *store.ValueTooLargeError
	require.True(t, errors.As(err, &tooLarge))
	require.Equal(t, []byte("wf:1"), tooLarge.Key)
	require.Equal(t, 9, tooLarge.Size)
	require.Equal(t, 8, tooLarge.Limit)
	require.NotContains(t, err.Error(), "SECRET")
	require.Contains(t, err.Error(), "wf:1")
}

func TestConditionFailedError_CarriesFoundState(t *testing.T) {
	t.Parallel()
	conds := []store.Condition{store.IfPresent([]byte("a")), store.IfVersion([]byte("b"), 4)}
	err := store.CheckConditions(conds, func(key []byte) (bool, uint64, error) { return true, 7, nil })
	var cf *store.ConditionFailedError
	require.True(t, errors.As(err, &cf))
	require.ErrorIs(t, err, store.ErrConditionFailed)
	require.Equal(t, []byte("b"), cf.Key)
	require.True(t, cf.Found)
	require.Equal(t, uint64(7), cf.Version)
	require.True(t, strings.Contains(err.Error(), "want version 4, found version 7"), err.Error())
}

func TestCondition_HoldsTable(t *testing.T) {
	t.Parallel()
	k := []byte("k")
	cases := []struct {
		cond    store.Condition
		found   bool
		version uint64
		want    bool
	}{
		{store.IfAbsent(k), false, 0, true},
		{store.IfAbsent(k), true, 1, false},
		{store.IfPresent(k), true, 1, true},
		{store.IfPresent(k), false, 0, false},
		{store.IfVersion(k, 5), true, 5, true},
		{store.IfVersion(k, 5), true, 6, false},
		{store.IfVersion(k, 5), false, 0, false},
	}
	for _, tc := range cases {
		require.Equal(t, tc.want, tc.cond.Holds(tc.found, tc.version), "%v found=%v version=%d", tc.cond.Kind, tc.found, tc.version)
	}
}

func TestOutcomeUnknownError_IsAndUnwraps(t *testing.T) {
	t.Parallel()
	cause := errors.New("connection reset during COMMIT")
	err := error(&store.OutcomeUnknownError{Cause: cause})
	require.ErrorIs(t, err, store.ErrOutcomeUnknown)
	require.ErrorIs(t, err, cause)
}

func TestScanParams_Bounds(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name         string
		params       store.ScanParams
		lower, upper string
		open, empty  bool
	}{
		{name: "prefix", params: store.ScanParams{Prefix: []byte("wf:")}, lower: "wf:", upper: "wf;"},
		{name: "range", params: store.ScanParams{Start: []byte("a"), End: []byte("c")}, lower: "a", upper: "c"},
		{name: "resume inside prefix", params: store.ScanParams{Prefix: []byte("wf:"), After: []byte("wf:7")}, lower: "wf:7\x00", upper: "wf;"},
		{name: "resume before start is ignored", params: store.ScanParams{Start: []byte("m"), After: []byte("a")}, lower: "m", open: true},
		{name: "resume past end is empty", params: store.ScanParams{Start: []byte("a"), End: []byte("c"), After: []byte("c")}, lower: "c\x00", upper: "c", empty: true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.NoError(t, tc.params.Validate())
			lower, upper, empty := tc.params.Bounds()
			require.Equal(t, tc.lower, string(lower))
			require.Equal(t, tc.open, upper == nil)
			if !tc.open {
				require.Equal(t, tc.upper, string(upper))
			}
			require.Equal(t, tc.empty, empty)
		})
	}
}

func TestScanParams_ValidateRejectsPrefixWithRangeAndBadLimits(t *testing.T) {
	t.Parallel()
	bad := []store.ScanParams{
		{Prefix: []byte("a"), Start: []byte("a")},
		{Start: []byte("b"), End: []byte("a")},
		{Limit: -1},
		{Limit: store.MaxScanLimit + 1},
	}
	for _, p := range bad {
		require.ErrorIs(t, p.Validate(), store.ErrInvalidArgument, "%+v", p)
	}
}

func TestPrefixEnd(t *testing.T) {
	t.Parallel()
	require.Equal(t, []byte("b"), store.PrefixEnd([]byte("a")))
	require.Equal(t, []byte("b"), store.PrefixEnd([]byte("a\xff\xff")))
	require.Nil(t, store.PrefixEnd([]byte("\xff\xff")))
	require.Nil(t, store.PrefixEnd(nil))
}

func TestValidateBatch_RejectsAKeyWrittenTwiceInShortAndLongBatches(t *testing.T) {
	for _, n := range []int{2, 8, 32, 33, 100} { // compared pairwise up to 32 writes, through a map beyond
		for _, dup := range []int{0, (n - 1) / 2, n - 2} {
			t.Run(fmt.Sprintf("writes=%d/first=%d", n, dup), func(t *testing.T) {
				ops := make([]store.Op, n)
				for i := range ops {
					ops[i] = store.Put([]byte(fmt.Sprintf("k%03d", i)), nil)
				}
				require.NoError(t, store.ValidateBatch(&store.Batch{Ops: ops}, casCaps))
				ops[n-1] = store.Delete(ops[dup].Key)
				require.ErrorIs(t, store.ValidateBatch(&store.Batch{Ops: ops}, casCaps), store.ErrInvalidArgument)
			})
		}
	}
}

func TestValidateBatch_RejectsAKeyConditionedTwiceInShortAndLongBatches(t *testing.T) {
	for _, n := range []int{2, 8, 32, 33, 100} { // compared pairwise up to 32 conditions, through a map beyond
		for _, dup := range []int{0, (n - 1) / 2, n - 2} {
			t.Run(fmt.Sprintf("conditions=%d/first=%d", n, dup), func(t *testing.T) {
				conds := make([]store.Condition, n)
				for i := range conds {
					conds[i] = store.IfAbsent([]byte(fmt.Sprintf("k%03d", i)))
				}
				require.NoError(t, store.ValidateBatch(&store.Batch{Conditions: conds}, casCaps))
				conds[n-1] = store.IfVersion(conds[dup].Key, 7)
				require.ErrorIs(t, store.ValidateBatch(&store.Batch{Conditions: conds}, casCaps), store.ErrInvalidArgument)
			})
		}
	}
}

func TestValidateBatch_AShortBatchIsCheckedWithoutAllocating(t *testing.T) {
	b := &store.Batch{
		Conditions: []store.Condition{store.IfVersion([]byte("wf\x00r\x00ckpt"), 3), store.IfAbsent([]byte("t\x00a"))},
		Ops: []store.Op{store.Put([]byte("wf\x00r\x00ckpt"), []byte("v")), store.Put([]byte("t\x00a"), []byte("v")),
			store.Delete([]byte("tm\x00b"))},
	}
	if allocs := testing.AllocsPerRun(100, func() {
		if err := store.ValidateBatch(b, casCaps); err != nil {
			t.Fatal(err)
		}
	}); allocs != 0 {
		t.Fatalf("validating a five-key batch allocated %.0f times; want 0", allocs)
	}
}
