package sqlstore

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

// randomGroup draws a group of 1 to 8 batches on keys of a small space (so
// that batches share keys now and then), with puts, deletes and conditions of
// every kind, values of 0 to 40 bytes.
func randomGroup(rng *rand.Rand, round int) *group {
	reqs := make([]*request, 1+rng.IntN(8))
	for i := range reqs {
		b := &store.Batch{}
		used := map[string]bool{}
		for range rng.IntN(6) {
			k := store.Key("wf", fmt.Sprint(rng.IntN(40)), "k")
			if used[string(k)] {
				continue
			}
			used[string(k)] = true
			if rng.IntN(4) == 0 {
				b.Ops = append(b.Ops, store.Delete(k))
			} else {
				b.Ops = append(b.Ops, store.Put(k, bytes.Repeat([]byte{byte(round)}, rng.IntN(41))))
			}
		}
		conds := map[string]bool{}
		for range rng.IntN(3) {
			k := store.Key("wf", fmt.Sprint(rng.IntN(40)), "k")
			if conds[string(k)] {
				continue
			}
			conds[string(k)] = true
			switch rng.IntN(3) {
			case 0:
				b.Conditions = append(b.Conditions, store.IfAbsent(k))
			case 1:
				b.Conditions = append(b.Conditions, store.Condition{Kind: store.CondPresent, Key: k})
			default:
				b.Conditions = append(b.Conditions, store.IfVersion(k, 1+rng.Uint64N(1<<40)))
			}
		}
		reqs[i] = newRequest(context.Background(), b, nil)
	}
	return newGroup(reqs)
}

// sent is what a one-round-trip attempt sends, copied out of its scratch.
type sent struct {
	condKeys, deletes, putKeys, putValues [][]byte
	condKinds, condVer, versions          []int64
	encoded                               [7][]byte
	puts                                  []tripPut
}

func sentBy(g *group, sc *tripScratch) sent {
	w := g.oneTripWrites(sc)
	s := sent{ // copies, nil when empty
		condKeys: append([][]byte(nil), w.condKeys...), deletes: append([][]byte(nil), w.deletes...),
		putKeys: append([][]byte(nil), w.putKeys...), putValues: append([][]byte(nil), w.putValues...),
		condKinds: append([]int64(nil), w.condKinds...), condVer: append([]int64(nil), w.condVer...),
		versions: append([]int64(nil), w.versions...),
	}
	for _, p := range sc.order { // the puts, in key order
		s.puts = append(s.puts, *p)
	}
	sc.encode(w)
	for i, enc := range sc.enc {
		s.encoded[i] = slices.Clone(enc)
	}
	return s
}

// A scratch reused from group to group sends, for every group, exactly what
// a fresh one sends: nothing of an earlier group's rows, conditions or
// versions is left in it.
func TestTripScratch_ReuseNeverLeaksOneGroupsRowsIntoAnother(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(16, 7))
	reused := &tripScratch{seen: map[uint64]int{}}
	for round := range 2000 {
		g := randomGroup(rng, round)
		fresh := &tripScratch{seen: map[uint64]int{}}
		one := pgStore.oneTrip(g, fresh)
		require.Equal(t, one, pgStore.oneTrip(g, reused), "round %d: oneTrip", round)
		want := sentBy(g, fresh)
		got := sentBy(g, reused)
		require.Equal(t, want, got, "round %d", round)
		if !one {
			continue // batches share a key: the group is decided batch by batch
		}
		// Every put of the group is sent once, with its own value.
		n := 0
		for _, i := range g.live {
			for _, op := range g.reqs[i].ops {
				if op.Kind == store.OpPut {
					n++
					at, found := slices.BinarySearchFunc(got.putKeys, op.Key, bytes.Compare)
					require.True(t, found)
					require.Equal(t, op.Value, got.putValues[at])
				}
			}
		}
		require.Len(t, got.putKeys, n)
		// Versions start unset: drawVersions alone fills them.
		for _, v := range got.versions {
			require.Zero(t, v)
		}
	}
}

// Each batch of a group that commits in one round trip gets the version its
// own key drew, at the position of its own op, deletes answering 0.
func TestAcceptAll_AnswersEachPutTheVersionOfItsKey(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(8, 25))
	sc := &tripScratch{seen: map[uint64]int{}}
	for round := range 500 {
		g := randomGroup(rng, round)
		if !pgStore.oneTrip(g, sc) {
			continue
		}
		w := g.oneTripWrites(sc)
		drawn := map[string]uint64{}
		for at, k := range w.putKeys {
			w.versions[at] = int64(1000*round + at + 1)
			drawn[string(k)] = uint64(w.versions[at])
		}
		g.acceptAll(sc)
		for _, i := range g.live {
			res := g.outcomes[i].res
			require.NotNil(t, res)
			require.Len(t, res.Versions, len(g.reqs[i].ops))
			for j, op := range g.reqs[i].ops {
				want := uint64(0)
				if op.Kind == store.OpPut {
					want = drawn[string(op.Key)]
				}
				require.Equal(t, want, res.Versions[j], "round %d batch %d op %d", round, i, j)
			}
		}
	}
}

// The arrays a leader encodes itself are the bytes pgx encodes for the
// same slices.
func FuzzEncodedArrays_EncodeAsPgxEncodes(f *testing.F) {
	f.Add([]byte("wf:r:ckpt\x00\x00\xff%:"), uint8(3), int64(-1<<62))
	f.Add([]byte{}, uint8(0), int64(0))
	f.Add([]byte("k"), uint8(1), int64(1<<40))
	f.Fuzz(func(t *testing.T, data []byte, n uint8, v int64) {
		// Split data into up to n elements, the first nil when n is odd.
		bs, ns := [][]byte{}, []int64{} // never a NULL array: the encoders write an empty one
		for i := range int(n % 16) {
			cut := 0
			if len(data) > 0 {
				cut = int(data[0]) % (len(data) + 1)
			}
			e := data[:cut:cut]
			data = data[cut:]
			if i == 0 && n%2 == 1 {
				e = nil
			}
			bs = append(bs, e)
			ns = append(ns, v+int64(i))
		}
		m := pgtype.NewMap()
		want, err := m.Encode(pgtype.ByteaArrayOID, pgtype.BinaryFormatCode, bs, nil)
		require.NoError(t, err)
		require.Equal(t, want, appendByteaArray([]byte("junk"), bs)[4:])
		want, err = m.Encode(pgtype.Int8ArrayOID, pgtype.BinaryFormatCode, ns, nil)
		require.NoError(t, err)
		require.Equal(t, want, appendInt8Array(nil, ns))
	})
}

// pgStore is a Store as oneTrip sees one on PostgreSQL.
var pgStore = &Store{dialect: PostgreSQL}

// A released scratch, as it goes back to the pool, references none of the
// finished group's keys or values.
func TestTripScratch_ReleasedHoldsNoReferenceToTheGroupsRows(t *testing.T) {
	t.Parallel()
	rng := rand.New(rand.NewPCG(3, 30))
	sc := &tripScratch{seen: map[uint64]int{}}
	for round := range 300 {
		g := randomGroup(rng, round)
		pgStore.oneTrip(g, sc)
		sentBy(g, sc)
		sc.release()
		require.Empty(t, sc.seen)
		w := &sc.w
		for _, a := range [][][]byte{w.condKeys, w.deletes, w.putKeys, w.putValues} {
			require.Empty(t, a)
			for _, e := range a[:cap(a)] {
				require.Nil(t, e, "round %d", round)
			}
		}
		require.Empty(t, sc.puts)
		for _, p := range sc.puts[:cap(sc.puts)] {
			require.Equal(t, tripPut{}, p, "round %d", round)
		}
		require.Empty(t, sc.order)
		for _, p := range sc.order[:cap(sc.order)] {
			require.Nil(t, p, "round %d", round)
		}
	}
}

// compareKeys orders two puts exactly as bytes.Compare orders their keys,
// whatever the keys: shorter than their leads, prefixes of one another,
// ending in zero bytes, equal in their first eight bytes.
func FuzzCompareKeys_OrdersAsTheKeysBytes(f *testing.F) {
	for _, p := range [][2]string{{"", ""}, {"a", "a\x00"}, {"ab", "a"}, {"\x00", ""}, {"wf:1000:ckpt", "wf:1000:ev"},
		{"wf:1000:", "wf:1000"}, {"\xff\xff\xff\xff\xff\xff\xff\xff\x00", "\xff\xff\xff\xff\xff\xff\xff\xff"}, {"abcdefg\x00", "abcdefg"}} {
		f.Add([]byte(p[0]), []byte(p[1]))
	}
	f.Fuzz(func(t *testing.T, a, b []byte) {
		pa, pb := &tripPut{key: a, lead: keyLead(a)}, &tripPut{key: b, lead: keyLead(b)}
		require.Equal(t, bytes.Compare(a, b), compareKeys(pa, pb), "%q vs %q", a, b)
		require.Equal(t, bytes.Compare(b, a), compareKeys(pb, pa), "%q vs %q", b, a)
	})
}
