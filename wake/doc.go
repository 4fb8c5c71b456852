// Package wake carries wake-ups between processes: the hint that a queue
// gained ready tasks or a run's log grew, so that a long poll or an event
// watch waiting in another weftd looks at the store now instead of at its
// next interval. A wake-up is never a payload, only the key that names what
// changed (a tenant's queue, a run), and it is only a hint: a lost one costs
// latency, never correctness, because every waiter still looks at the store
// on its interval.
//
// Batcher coalesces the keys that commits wake into few messages and drops
// rather than blocks when its buffer is full; Encode and Decode are the
// message format. Transports live beside it, one package each
// (wake/rediswake: Redis pub/sub).
//
// It imports only the standard library.
package wake
