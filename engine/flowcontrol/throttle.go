package flowcontrol

import (
	"encoding/binary"
	"errors"
	"time"
)

// MaxBurst is the largest burst a throttle may have.
const MaxBurst = 10_000

// Throttle is the generic cell rate algorithm (GCRA) over a rate and a
// burst: tasks go at most one per Rate.Interval on average, and up to Burst
// at once after a quiet spell. Over any window of length W it lets at most
// Burst + W/Interval tasks through; a task it holds back is told when to
// come again, and nothing is dropped.
type Throttle struct {
	rate     Rate
	burst    int
	interval int64 // ns
	tau      int64 // ns: how far ahead of now the bucket may run
}

// NewThrottle answers the throttle of rate with burst (0: 1, no burst).
func NewThrottle(rate Rate, burst int) (Throttle, error) {
	if rate.Count < 1 || rate.Count > MaxCount || rate.Period < MinPeriod || rate.Period > MaxPeriod {
		return Throttle{}, errorf(RuleRateCount, "a rate's count must be between 1 and %d and its period between 1s and 1d", MaxCount)
	}
	if burst == 0 {
		burst = 1
	}
	if burst < 1 || burst > MaxBurst {
		return Throttle{}, errorf(RuleBurst, "burst must be between 1 and %d", MaxBurst)
	}
	iv := int64(rate.Interval())
	return Throttle{rate: rate, burst: burst, interval: iv, tau: iv * int64(burst-1)}, nil
}

// Rate answers the throttle's rate.
func (t Throttle) Rate() Rate { return t.rate }

// Burst answers the throttle's burst.
func (t Throttle) Burst() int { return t.burst }

// Bucket is a throttle's state for one key: the theoretical arrival time
// of the next task, in nanoseconds since the Unix epoch. The zero Bucket is
// full. It is a small comparable value: store it beside the key and change
// it with a compare-and-set in the batch that claims the task.
type Bucket struct {
	TAT int64
}

// Decision is what Take decided.
type Decision struct {
	// Allowed: the task may go now.
	Allowed bool
	// RetryAt is when a held-back task may go (zero when Allowed).
	RetryAt time.Time
	// Tokens is how many tasks could go at now after this decision.
	Tokens int
}

// Take decides one task at now: whether it may go, and the bucket after.
// A bucket not allowed is answered unchanged. now comes from the caller's
// clock (wall time shared by every process: the bucket is stored); a clock
// that goes back only holds tasks back longer, never lets more through.
func (t Throttle) Take(b Bucket, now time.Time) (Bucket, Decision) {
	n := now.UnixNano()
	tat := max(b.TAT, n)
	if tat-n > t.tau {
		return b, Decision{RetryAt: time.Unix(0, tat-t.tau).UTC(), Tokens: 0}
	}
	next := Bucket{TAT: tat + t.interval}
	return next, Decision{Allowed: true, Tokens: t.Tokens(next, now)}
}

// Tokens answers how many tasks could go at now, 0 to Burst.
func (t Throttle) Tokens(b Bucket, now time.Time) int {
	n := now.UnixNano()
	ahead := max(b.TAT, n) - n
	if ahead > t.tau {
		return 0
	}
	return int((t.tau-ahead)/t.interval) + 1
}

// NextRelease answers when the bucket next has a token (now when it has
// one).
func (t Throttle) NextRelease(b Bucket, now time.Time) time.Time {
	n := now.UnixNano()
	if at := b.TAT - t.tau; at > n {
		return time.Unix(0, at).UTC()
	}
	return now
}

// Idle reports whether the bucket is full at now (its theoretical arrival
// time has passed): it lets as many tasks through as no bucket would, so
// it may be deleted, which bounds the stored buckets to the keys busy
// recently.
func (b Bucket) Idle(now time.Time) bool { return b.TAT <= now.UnixNano() }

// bucketFormat is the first byte of a stored bucket.
const bucketFormat = 1

// AppendBinary appends the bucket's stored form: a format byte (1) and the
// TAT as 8 bytes big-endian.
func (b Bucket) AppendBinary(dst []byte) ([]byte, error) {
	return binary.BigEndian.AppendUint64(append(dst, bucketFormat), uint64(b.TAT)), nil
}

// MarshalBinary answers the bucket's stored form.
func (b Bucket) MarshalBinary() ([]byte, error) { return b.AppendBinary(nil) }

// UnmarshalBinary reads a stored bucket.
func (b *Bucket) UnmarshalBinary(data []byte) error {
	if len(data) != 9 || data[0] != bucketFormat {
		return errors.New("flowcontrol: not a stored bucket")
	}
	b.TAT = int64(binary.BigEndian.Uint64(data[1:]))
	return nil
}
