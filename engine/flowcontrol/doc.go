// Package flowcontrol is the arithmetic of flow control, as pure functions
// over small values the engine stores: a throttle's rate and its bucket,
// priorities, concurrency limits, and fair ordering by weighted keys. It
// decides nothing about a store; the dispatch decision reads the values
// before it runs these rules and writes what they answer in the batch that
// claims a task.
//
// # Rates
//
// [ParseRate] reads "<count>/<period>": the count 1–1,000,000, the period a
// whole number (1 when left out) and a unit — s, m, h or d — from 1s to 1d:
// "100/1m", "20/s", "5/10s". Anything else ("fast", "100/1ms", " 100/1m")
// is refused with the rule rate_format, rate_count or rate_period. The
// interval between tasks, period ÷ count, rounds up to a whole nanosecond,
// so the rate is never exceeded.
//
// # Throttles
//
// [Throttle] is the generic cell rate algorithm with a burst (1–10,000,
// default 1): its state for a key is a [Bucket], the theoretical arrival
// time of the next task (Unix nanoseconds; zero is full) — one comparable
// int64 with a 9-byte stored form, changed by compare-and-set. [Throttle.Take]
// at now lets a task go when the bucket is no more than (burst − 1)
// intervals ahead of now, and moves it one interval on; otherwise it
// answers when to come back, and the bucket is unchanged. So over any
// window of length W at most burst + W ÷ interval tasks go (a clock that
// goes back only holds tasks longer), and a backlog goes at exactly the
// rate once the burst is spent: a held task retried when told always goes.
// The clock is the caller's (wall time: the bucket is shared by every
// process).
//
// # Priorities and fairness
//
// Priorities are 1 (handed out first) to 5, default 3, strictly in order;
// within a priority tasks are handed out by start-time fair queueing over
// their fairness keys. Each priority keeps a virtual time, each key a
// finish tag. [Pick] chooses, among each key's oldest ready task (a
// [Head]), the best priority, then the smallest start tag (the later of
// the virtual time and the key's finish tag), then the older task, then
// the smaller key; [Serve] moves the virtual time to that start and the
// key's finish tag on by 1,000,000 ÷ weight (weights 0.001–1000, default
// 1). Keys that stay backlogged are served in proportion to their weights
// (their served counts over weights differ by at most one task of each),
// FIFO within a key; an idle key that becomes ready starts at the virtual
// time, so a deep backlog elsewhere delays it by at most one task of each
// other key. A finish tag at or behind the virtual time changes no pick
// ([Stale]) and may be deleted, which bounds the state to recently served
// keys.
//
// Concurrency limits are 1–100,000 ([ValidLimit]).
//
// Layering: it is pure code over values; it imports the standard library
// only.
package flowcontrol
