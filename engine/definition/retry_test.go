package definition

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestBackoff_StrategiesFollowSpec002(t *testing.T) {
	s := time.Second
	cases := []struct {
		name   string
		policy RetryPolicy
		want   []time.Duration
	}{
		{"constant", RetryPolicy{Strategy: BackoffConstant, InitialBackoff: Ms(5000), MaxBackoff: Ms(60000)}, []time.Duration{5 * s, 5 * s, 5 * s}},
		{"linear", RetryPolicy{Strategy: BackoffLinear, InitialBackoff: Ms(5000), MaxBackoff: Ms(60000)}, []time.Duration{5 * s, 10 * s, 15 * s}},
		{"exponential", RetryPolicy{Strategy: BackoffExponential, InitialBackoff: Ms(1000), Multiplier: 2, MaxBackoff: Ms(60000)}, []time.Duration{s, 2 * s, 4 * s, 8 * s}},
		{"default policy caps at 30s", DefaultRetryPolicy(), []time.Duration{s, 2 * s, 4 * s, 8 * s, 16 * s, 30 * s, 30 * s}},
		{"compensation default caps at 10s", DefaultCompensationRetryPolicy(), []time.Duration{s, 2 * s, 4 * s, 8 * s, 10 * s}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for i, want := range tc.want {
				require.Equal(t, want, tc.policy.Backoff(i+1), "retry %d", i+1)
			}
		})
	}
}

func TestRetryDecision_DefaultPerErrorClass(t *testing.T) {
	p := DefaultRetryPolicy()
	cases := map[ErrorClass]bool{
		ErrorTimeout: true, ErrorRateLimit: true, ErrorTransient: true, ErrorTransport: true,
		ErrorValidation: false, ErrorPolicyDeny: false, ErrorAuthDeny: false, ErrorBusinessConflict: false,
		ErrorAgent: true, ErrorExternal: true, ErrorGovernance: false, ErrorUnknown: true, "": true, "made-up": true,
		ErrorCancelled: false, ErrorReconciliationResultUnavailable: false, ErrorReconciliationIndeterminate: false,
		ErrorScheduleToStart: true,
	}
	for class, want := range cases {
		require.Equal(t, want, p.Retryable(class), "class %q", class)
	}
	require.True(t, p.ShouldRetry(2, ErrorUnknown), "unknown is retried until max_attempts")
	require.False(t, p.ShouldRetry(3, ErrorUnknown))
	custom := RetryPolicy{MaxAttempts: 3, RetryableErrors: []ErrorClass{ErrorValidation}}
	require.True(t, custom.Retryable(ErrorValidation), "retryable_errors replaces the defaults")
	require.False(t, custom.Retryable(ErrorTimeout), "002's timeout-not-retried is a list without it")
}
