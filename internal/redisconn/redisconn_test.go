package redisconn_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/redisconn"
)

func TestOpen_ParsesTheURLsAddressAndDatabase(t *testing.T) {
	for _, tc := range []struct {
		url  string
		addr string
		db   int
	}{
		{redisconn.DefaultURL, "127.0.0.1:6379", 0},
		{"redis://r:6380/2", "r:6380", 2},
		{"redis://user:secret@r", "r:6379", 0},
	} {
		rdb, err := redisconn.Open(tc.url)
		require.NoError(t, err, tc.url)
		require.Equal(t, tc.addr, rdb.Options().Addr, tc.url)
		require.Equal(t, tc.db, rdb.Options().DB, tc.url)
		require.NoError(t, rdb.Close())
	}
}

func TestOpen_ABadURLIsAnErrorNamingTheRedisURL(t *testing.T) {
	for _, url := range []string{"http://127.0.0.1:6379", "redis://r/notanumber", "::"} {
		_, err := redisconn.Open(url)
		require.ErrorContains(t, err, "redis URL", url)
	}
}

func TestOpen_ABadURLsErrorDoesNotCarryItsPassword(t *testing.T) {
	for _, url := range []string{"redis://user:hunter2@r:port/0", "redis://:hunter2@r:6379/x", "http://:hunter2@r"} {
		_, err := redisconn.Open(url)
		require.Error(t, err, url)
		require.NotContains(t, err.Error(), "hunter2", url)
	}
}
