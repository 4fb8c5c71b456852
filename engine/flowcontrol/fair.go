package flowcontrol

import (
	"cmp"
	"math"
)

// The bounds of a priority, a concurrency limit and a fairness weight.
const (
	// HighestPriority is priority 1, handed out first; LowestPriority is 5.
	HighestPriority = 1
	// LowestPriority is the last priority handed out.
	LowestPriority = 5
	// DefaultPriority is a run's priority when neither its definition nor
	// its submission sets one.
	DefaultPriority = 3
	// MaxLimit is the largest concurrency limit.
	MaxLimit = 100_000
	// MinWeight and MaxWeight bound a fairness weight.
	MinWeight = 0.001
	// MaxWeight is the largest fairness weight.
	MaxWeight = 1000.0
	// DefaultWeight is a fairness key's weight when none is given.
	DefaultWeight = 1.0
	// costScale is the virtual time one task of weight 1 takes.
	costScale = 1_000_000
)

// ValidPriority checks a priority: 1 (first) to 5.
func ValidPriority(p int) error {
	if p < HighestPriority || p > LowestPriority {
		return errorf(RulePriority, "priority must be between %d (highest) and %d", HighestPriority, LowestPriority)
	}
	return nil
}

// ValidLimit checks a concurrency limit: 1 to MaxLimit.
func ValidLimit(n int) error {
	if n < 1 || n > MaxLimit {
		return errorf(RuleLimit, "limit must be between 1 and %d", MaxLimit)
	}
	return nil
}

// ValidWeight checks a fairness weight: a finite number from 0.001 to
// 1000.
func ValidWeight(w float64) error {
	if math.IsNaN(w) || w < MinWeight || w > MaxWeight {
		return errorf(RuleWeight, "weight must be between %g and %g", MinWeight, MaxWeight)
	}
	return nil
}

// cost is the virtual time one task of weight w takes (w valid).
func cost(w float64) uint64 {
	return uint64(math.Round(costScale / w))
}

// Head is a fairness key's oldest ready task at one priority, as the
// dispatch decision reads it before it picks: start-time fair queueing
// within each priority, priorities strictly in order.
type Head struct {
	// Key is the task's fairness key ("" when it has none: one key).
	Key string
	// Priority is the task's priority, 1 (first) to 5.
	Priority int
	// Weight is the key's weight (valid).
	Weight float64
	// Seq is the task's place in the queue's FIFO order (smaller: older).
	Seq uint64
	// Finish is the key's stored finish tag at this priority (0: none).
	Finish uint64
}

// Pick answers the index of the head to hand out next, or -1 when heads is
// empty: the best priority first; within it the head whose start tag —
// the later of its priority's virtual time and its key's finish tag — is
// smallest, then the older task, then the smaller key. virtual answers a
// priority's stored virtual time.
//
// Within a priority, keys that stay backlogged are served in proportion to
// their weights (after any interval their counts divided by their weights
// differ by at most one task's worth of each), and a key that becomes
// ready starts at the virtual time, so a deep backlog elsewhere delays it
// by at most one task of each other key.
func Pick(heads []Head, virtual func(priority int) uint64) int {
	best := -1
	var bestStart uint64
	for i, h := range heads {
		start := max(virtual(h.Priority), h.Finish)
		if best < 0 || before(h, start, heads[best], bestStart) {
			best, bestStart = i, start
		}
	}
	return best
}

// before orders two heads by priority, start tag, FIFO place and key.
func before(a Head, aStart uint64, b Head, bStart uint64) bool {
	if c := cmp.Compare(a.Priority, b.Priority); c != 0 {
		return c < 0
	}
	if c := cmp.Compare(aStart, bStart); c != 0 {
		return c < 0
	}
	if c := cmp.Compare(a.Seq, b.Seq); c != 0 {
		return c < 0
	}
	return a.Key < b.Key
}

// Serve answers, after h's task is handed out, its priority's new virtual
// time (h's start tag) and its key's new finish tag (the start plus the
// task's cost, 1,000,000 / weight). Write both in the batch that claims
// the task.
func Serve(virtual uint64, h Head) (newVirtual, newFinish uint64) {
	start := max(virtual, h.Finish)
	return start, start + cost(h.Weight)
}

// Stale reports whether a key's finish tag no longer changes any pick (it
// is at or before its priority's virtual time), so that it may be deleted:
// the state kept is bounded by the keys that were served recently.
func Stale(finish, virtual uint64) bool {
	return finish <= virtual
}
