// Package faultstore is a fault-injecting decorator over any store.Store,
// after Temporal's fault-injection persistence client. It proves crash
// windows: a commit can fail before the inner commit (nothing written), after
// it (written, but the caller sees *store.OutcomeUnknownError), or with a
// retryable conflict (store.ErrRetryable, nothing written), each at a chosen
// rate or deterministically with InjectNext.
//
// Layering: imports store and the standard library only.
package faultstore
