package sqlstore

import (
	"context"
	"errors"
	"fmt"
	"io"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

func pgErr(code string) error { return &pgconn.PgError{Code: code, Message: "server says " + code} }

func TestTranslateCommit_ErrorClasses(t *testing.T) {
	t.Parallel()
	cf := &store.ConditionFailedError{Condition: store.IfAbsent([]byte("k")), Key: []byte("k"), Found: true, Version: 3}
	cases := []struct {
		name string
		in   error
		want error
	}{
		{"serialization failure is retryable", pgErr("40001"), store.ErrRetryable},
		{"deadlock is retryable", fmt.Errorf("wrapped: %w", pgErr("40P01")), store.ErrRetryable},
		{"statement completion unknown is ambiguous", pgErr("40003"), store.ErrOutcomeUnknown},
		{"condition failure passes through", cf, store.ErrConditionFailed},
		{"unknown outcome passes through", &store.OutcomeUnknownError{Cause: io.EOF}, store.ErrOutcomeUnknown},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.ErrorIs(t, translateCommit(tc.in), tc.want)
		})
	}
	require.NotErrorIs(t, translateCommit(pgErr("40003")), store.ErrRetryable, "an ambiguous commit is never retried")
	require.False(t, retryable(&store.OutcomeUnknownError{Cause: pgErr("40001")}), "an unknown outcome is never retried")
	other := translateCommit(pgErr("23502"))
	require.NotErrorIs(t, other, store.ErrRetryable)
	require.NotErrorIs(t, other, store.ErrOutcomeUnknown)
}

func TestCommitError_LostConnectionDuringCommitIsOutcomeUnknown(t *testing.T) {
	t.Parallel()
	require.NoError(t, commitError(nil))
	require.ErrorIs(t, commitError(io.ErrUnexpectedEOF), store.ErrOutcomeUnknown)
	require.ErrorIs(t, commitError(context.Canceled), store.ErrOutcomeUnknown)
	// A server error at COMMIT means PostgreSQL rolled back: not ambiguous.
	err := commitError(pgErr("40001"))
	require.False(t, errors.Is(err, store.ErrOutcomeUnknown))
	require.True(t, retryable(err))
}

func TestOpen_RefusesAPostgreSQLOlderThanTheFirstWithMerge(t *testing.T) {
	for _, tc := range []struct {
		server  Dialect
		version string
		ok      bool
	}{
		{PostgreSQL, "PostgreSQL 15.19 (Debian 15.19-0+deb12u1) on x86_64-pc-linux-gnu", true},
		{PostgreSQL, "PostgreSQL 18.1 on aarch64-unknown-linux-gnu", true},
		{PostgreSQL, "PostgreSQL 16beta1 on x86_64-pc-linux-gnu", true},
		{PostgreSQL, "PostgreSQL 14.12 (Ubuntu 14.12-1) on x86_64-pc-linux-gnu", false},
		{PostgreSQL, "PostgreSQL 9.6.24 on x86_64-pc-linux-gnu", false},
		{PostgreSQL, "EnterpriseDB 15.2", false},
		{PostgreSQL, "PostgreSQL devel", false},
		{CockroachDB, "CockroachDB CCL v25.2.1 (x86_64-pc-linux-gnu)", true},
	} {
		err := checkPostgreSQLVersion(tc.server, tc.version)
		if tc.ok {
			require.NoError(t, err, tc.version)
			continue
		}
		require.Error(t, err, tc.version)
		require.Contains(t, err.Error(), "PostgreSQL", tc.version)
	}
	require.ErrorContains(t, checkPostgreSQLVersion(PostgreSQL, "PostgreSQL 14.12"), "PostgreSQL 15 or later is required, the server is PostgreSQL 14")
}
