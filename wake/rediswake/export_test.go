package rediswake

import "context"

// RunWithoutSubscribing runs only n's publishing side: a process whose own
// subscription is down.
func RunWithoutSubscribing(ctx context.Context, n *Notifier) { n.batch.Run(ctx) }
