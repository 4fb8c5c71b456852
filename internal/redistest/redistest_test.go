package redistest_test

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/redistest"
)

func TestURL_EnvironmentOverridesTheDefault(t *testing.T) {
	t.Setenv("WEFT_TEST_REDIS_URL", "")
	require.Equal(t, "redis://127.0.0.1:6379", redistest.URL())
	t.Setenv("WEFT_TEST_REDIS_URL", "redis://elsewhere:6390/1")
	require.Equal(t, "redis://elsewhere:6390/1", redistest.URL())
}

func TestPrefix_KeysUnderItAreDeletedWhenTheTestEnds(t *testing.T) {
	rdb := redistest.Require(t)
	ctx := context.Background()
	var prefix string
	t.Run("writer", func(t *testing.T) {
		prefix = redistest.Prefix(t, rdb)
		require.NoError(t, rdb.Set(ctx, prefix+"a", "1", 0).Err())
		require.NoError(t, rdb.Set(ctx, prefix+"b", "2", 0).Err())
	})
	keys, err := rdb.Keys(ctx, prefix+"*").Result()
	require.NoError(t, err)
	require.Empty(t, keys)
	require.NotEqual(t, prefix, redistest.Prefix(t, rdb), "each call answers a prefix of its own")
}

func TestPrivate_StopsAndStartsAgainEmptyOnTheSamePort(t *testing.T) {
	r := redistest.StartPrivate(t)
	rdb := redis.NewClient(&redis.Options{Addr: r.Addr(), MaxRetries: -1})
	defer rdb.Close()
	ctx := context.Background()
	require.NoError(t, rdb.Set(ctx, "k", "v", 0).Err())
	r.Stop()
	require.Error(t, rdb.Ping(ctx).Err(), "a stopped server does not answer")
	r.Start()
	require.ErrorIs(t, rdb.Get(ctx, "k").Err(), redis.Nil, "it starts again without the old data")
}
