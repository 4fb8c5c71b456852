package store

import "context"

// A Rider is a write that must commit in the same batch as a call's action,
// so that neither lands without the other: the audit record of the call
// that made a decision (audit.Rider) rides that decision's batch. The
// layers that commit a call's action (the engine's decision pipeline, the
// scheduler's record writes) call [Ride] on that batch; nothing else does.
type Rider interface {
	// Ops answers the ops to add to the batch about to commit, or none when
	// they already committed, or ride a batch still in flight.
	Ops() []Op
	// Settle tells the rider how the batch that carried its ops ended: nil
	// when it committed. After any other error the rider offers its ops
	// again (an unknown outcome's retry writes the same keys).
	Settle(err error)
}

type riderKey struct{}

// WithRider answers ctx carrying r: the first batch of the call's action
// committed under it carries r's ops.
func WithRider(ctx context.Context, r Rider) context.Context {
	return context.WithValue(ctx, riderKey{}, r)
}

func noSettle(error) {}

// Ride adds the ops of ctx's rider, if it has one with ops to offer, to b,
// and answers the function to call with b's commit error.
func Ride(ctx context.Context, b *Batch) (settle func(error)) {
	r := RiderOf(ctx)
	if r == nil {
		return noSettle
	}
	ops := r.Ops()
	if len(ops) == 0 {
		return noSettle
	}
	b.Ops = append(b.Ops, ops...)
	return r.Settle
}

// RiderOf answers ctx's rider, or nil.
func RiderOf(ctx context.Context) Rider {
	r, _ := ctx.Value(riderKey{}).(Rider)
	return r
}
