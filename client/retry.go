package client

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"time"

	"connectrpc.com/connect"
)

// RetryPolicy says how the client repeats calls that are safe to repeat.
// Zero fields take DefaultRetryPolicy's values.
type RetryPolicy struct {
	// MaxAttempts counts the first call; 1 disables retries.
	MaxAttempts int
	// InitialBackoff is the wait before the second attempt.
	InitialBackoff time.Duration
	// MaxBackoff caps every wait.
	MaxBackoff time.Duration
	// Multiplier grows the wait after each attempt.
	Multiplier float64
}

// DefaultRetryPolicy is 4 attempts, waiting 100 ms, 200 ms, 400 ms (each with
// up to 20% jitter), capped at 2 s.
var DefaultRetryPolicy = RetryPolicy{MaxAttempts: 4, InitialBackoff: 100 * time.Millisecond,
	MaxBackoff: 2 * time.Second, Multiplier: 2}

func (p RetryPolicy) withDefaults() RetryPolicy {
	if p.MaxAttempts <= 0 {
		p.MaxAttempts = DefaultRetryPolicy.MaxAttempts
	}
	if p.InitialBackoff <= 0 {
		p.InitialBackoff = DefaultRetryPolicy.InitialBackoff
	}
	if p.MaxBackoff <= 0 {
		p.MaxBackoff = DefaultRetryPolicy.MaxBackoff
	}
	if p.Multiplier < 1 {
		p.Multiplier = DefaultRetryPolicy.Multiplier
	}
	return p
}

// backoff answers the wait after the given failed attempt (1-based).
func (p RetryPolicy) backoff(attempt int) time.Duration {
	d := float64(p.InitialBackoff)
	for range attempt - 1 {
		d *= p.Multiplier
		if d >= float64(p.MaxBackoff) {
			break
		}
	}
	d = min(d, float64(p.MaxBackoff))
	return time.Duration(d * (1 + 0.2*rand.Float64()))
}

// Retryable reports whether a failed call may be repeated as it is: the
// server was unavailable (or could not be reached), or the attempt's
// deadline passed on the server. Answers from the server about the request
// itself (every 4xx, including 429) are not retryable.
func Retryable(err error) bool {
	switch connect.CodeOf(err) {
	case connect.CodeUnavailable, connect.CodeDeadlineExceeded:
		return true
	}
	return false
}

// call runs fn with the client's retry policy when idempotent, else once,
// and answers its error as *Error.
func call[T any](ctx context.Context, c *Client, idempotent bool, fn func(context.Context) (T, error)) (T, error) {
	attempts := 1
	if idempotent {
		attempts = c.retry.MaxAttempts
	}
	var zero T
	for attempt := 1; ; attempt++ {
		out, err := fn(ctx)
		if err == nil {
			return out, nil
		}
		if attempt >= attempts || !Retryable(err) || ctx.Err() != nil {
			if ctx.Err() != nil && !errors.As(err, new(*connect.Error)) {
				err = ctx.Err()
			}
			return zero, wrapError(err)
		}
		t := time.NewTimer(c.retry.backoff(attempt))
		select {
		case <-ctx.Done():
			t.Stop()
			return zero, wrapError(err)
		case <-t.C:
		}
	}
}

// newUUID answers a random (version 4) UUID.
func newUUID() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	h := hex.EncodeToString(b[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}
