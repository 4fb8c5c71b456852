package sqlstore

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A group's context ends at the latest of its callers' deadlines, never
// when a caller cancels, and has no deadline when a caller has none.
func TestGroupContext_EndsAtTheLatestDeadlineNeverAtACancel(t *testing.T) {
	t.Parallel()
	now := time.Now()
	soon, later := now.Add(time.Hour), now.Add(2*time.Hour)
	withDeadline := func(d time.Time) context.Context {
		ctx, cancel := context.WithDeadline(context.Background(), d)
		t.Cleanup(cancel)
		return ctx
	}
	canceled, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name     string
		ctxs     []context.Context
		deadline time.Time // zero: none
	}{
		{"no deadline", []context.Context{context.Background()}, time.Time{}},
		{"one without a deadline", []context.Context{withDeadline(soon), context.Background()}, time.Time{}},
		{"the latest deadline", []context.Context{withDeadline(later), withDeadline(soon)}, later},
		{"a canceled caller", []context.Context{canceled}, time.Time{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reqs := make([]*request, len(tc.ctxs))
			for i, ctx := range tc.ctxs {
				reqs[i] = &request{ctx: ctx}
			}
			ctx, cancel := groupContext(reqs)
			defer cancel()
			d, ok := ctx.Deadline()
			require.Equal(t, !tc.deadline.IsZero(), ok)
			require.True(t, d.Equal(tc.deadline), "deadline %v, want %v", d, tc.deadline)
			require.NoError(t, ctx.Err(), "no caller ends the group's context")
		})
	}
}
