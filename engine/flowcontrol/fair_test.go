package flowcontrol

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
	"pgregory.net/rapid"
)

// queue is one queue's ready tasks and its fairness state, as the store
// would hold them, for the tests to drive Pick and Serve.
type queue struct {
	tasks   map[string][]task // per key (and priority, in the key's name), FIFO
	finish  map[string]uint64
	virtual map[int]uint64
	weights map[string]float64
	seq     uint64
}

type task struct {
	key      string
	priority int
	seq      uint64
}

func newQueue() *queue {
	return &queue{tasks: map[string][]task{}, finish: map[string]uint64{}, virtual: map[int]uint64{}, weights: map[string]float64{}}
}

// add enqueues n tasks of key at priority.
func (q *queue) add(key string, priority, n int) {
	id := fmt.Sprintf("%d/%s", priority, key)
	for range n {
		q.seq++
		q.tasks[id] = append(q.tasks[id], task{key: key, priority: priority, seq: q.seq})
	}
}

// next hands out one task: it reads the heads, picks and serves, as a
// dispatch decision would. ok is false when the queue is empty.
func (q *queue) next() (task, bool) {
	var heads []Head
	var ids []string
	for id, ts := range q.tasks {
		if len(ts) == 0 {
			continue
		}
		h := ts[0]
		w, ok := q.weights[h.key]
		if !ok {
			w = DefaultWeight
		}
		heads = append(heads, Head{Key: h.key, Priority: h.priority, Weight: w, Seq: h.seq, Finish: q.finish[id]})
		ids = append(ids, id)
	}
	i := Pick(heads, func(p int) uint64 { return q.virtual[p] })
	if i < 0 {
		return task{}, false
	}
	h, id := heads[i], ids[i]
	q.virtual[h.Priority], q.finish[id] = Serve(q.virtual[h.Priority], h)
	for k, f := range q.finish {
		if Stale(f, q.virtual[h.Priority]) && k[0] == id[0] {
			delete(q.finish, k) // pruning changes no pick
		}
	}
	t := q.tasks[id][0]
	q.tasks[id] = q.tasks[id][1:]
	return t, true
}

func TestPick_EmptyHeads(t *testing.T) {
	t.Parallel()
	require.Equal(t, -1, Pick(nil, func(int) uint64 { return 0 }))
}

func TestFairness_AShallowKeyIsNotStarvedByADeepOne(t *testing.T) {
	t.Parallel()
	q := newQueue()
	q.add("A", DefaultPriority, 1000)
	q.add("B", DefaultPriority, 10)
	lastB := 0
	for i := 1; i <= 1010; i++ {
		tk, ok := q.next()
		require.True(t, ok)
		if tk.key == "B" {
			lastB = i
		}
	}
	require.LessOrEqual(t, lastB, 20, "B's 10 tasks are all handed out within the first 20")
}

func TestPriority_HigherFirstFIFOWithin(t *testing.T) {
	t.Parallel()
	q := newQueue()
	q.add("", 5, 100)
	q.add("", 1, 10)
	var seqs []uint64
	for range 10 {
		tk, _ := q.next()
		require.Equal(t, 1, tk.priority, "the next 10 claims are the high-priority tasks")
		seqs = append(seqs, tk.seq)
	}
	for i := 1; i < len(seqs); i++ {
		require.Less(t, seqs[i-1], seqs[i], "FIFO within a priority")
	}
	tk, _ := q.next()
	require.Equal(t, 5, tk.priority)
}

func TestFairness_WeightsAreServedInProportion(t *testing.T) {
	t.Parallel()
	q := newQueue()
	q.weights["gold"], q.weights["free"] = 3, 1
	q.add("gold", 3, 1000)
	q.add("free", 3, 1000)
	count := map[string]int{}
	for range 400 {
		tk, _ := q.next()
		count[tk.key]++
	}
	require.InDelta(t, 300, count["gold"], 1)
	require.InDelta(t, 100, count["free"], 1)
}

// TestFairness_Properties drives random queues with tasks arriving: every
// key FIFO, and a key that becomes ready is served before any other key
// gets more than its share of one of the new key's tasks (an idle key:
// within one task of each other key).
func TestFairness_Properties(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		q := newQueue()
		nkeys := rapid.IntRange(1, 6).Draw(t, "keys")
		keys := make([]string, nkeys)
		for i := range keys {
			keys[i] = fmt.Sprintf("k%d", i)
			q.weights[keys[i]] = rapid.SampledFrom([]float64{0.5, 1, 2, 3, 10}).Draw(t, "weight")
			q.add(keys[i], 3, rapid.IntRange(0, 200).Draw(t, "backlog"))
		}
		served := map[string]int{}
		lastSeq := map[string]uint64{}
		waiting := map[string]int{} // picks since a key became ready
		allowed := map[string]int{} // the most picks it may wait
		share := func(k string) int {
			n := 0
			for _, j := range keys {
				if j != k {
					n += int((cost(q.weights[k])+cost(q.weights[j])-1)/cost(q.weights[j])) + 1
				}
			}
			return n
		}
		for step := 0; step < 300; step++ {
			if rapid.IntRange(0, 9).Draw(t, "arrive") == 0 {
				k := rapid.SampledFrom(keys).Draw(t, "arriving")
				if len(q.tasks["3/"+k]) == 0 {
					waiting[k], allowed[k] = 0, share(k)
					if Stale(q.finish["3/"+k], q.virtual[3]) {
						allowed[k] = nkeys - 1
					}
				}
				q.add(k, 3, rapid.IntRange(1, 5).Draw(t, "n"))
			}
			tk, ok := q.next()
			if !ok {
				continue
			}
			if tk.seq <= lastSeq[tk.key] {
				t.Fatalf("key %s out of FIFO order", tk.key)
			}
			lastSeq[tk.key] = tk.seq
			served[tk.key]++
			for k := range waiting {
				if k == tk.key {
					delete(waiting, k)
				} else if waiting[k]++; waiting[k] > allowed[k] {
					t.Fatalf("key %s waited %d picks, more than %d", k, waiting[k], allowed[k])
				}
			}
		}
	})
}

// TestFairness_ProportionBound checks start-time fair queueing's bound:
// for two keys backlogged throughout, served counts divided by weights
// differ by at most one task of each.
func TestFairness_ProportionBound(t *testing.T) {
	t.Parallel()
	rapid.Check(t, func(t *rapid.T) {
		q := newQueue()
		wa := rapid.Float64Range(MinWeight*100, 100).Draw(t, "wa")
		wb := rapid.Float64Range(MinWeight*100, 100).Draw(t, "wb")
		q.weights["a"], q.weights["b"] = wa, wb
		q.add("a", 3, 2000)
		q.add("b", 3, 2000)
		var na, nb float64
		for range rapid.IntRange(1, 1500).Draw(t, "picks") {
			tk, _ := q.next()
			if tk.key == "a" {
				na++
			} else {
				nb++
			}
			ca, cb := float64(cost(wa)), float64(cost(wb))
			if diff := na*ca - nb*cb; diff > ca+cb || -diff > ca+cb {
				t.Fatalf("a served %v (weight %v), b %v (weight %v)", na, wa, nb, wb)
			}
		}
	})
}
