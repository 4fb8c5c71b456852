package export_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/export"
)

func TestMemoryBus_SubscribersSeeEveryPublishDuplicatesIncluded(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	bus := export.NewMemoryBus()
	sub := bus.Subscribe()
	got := make(chan export.Message, 3)
	go func() {
		for range 3 {
			m, err := sub.Next(ctx)
			if err != nil {
				return
			}
			got <- m
		}
	}()
	for _, id := range []string{"a", "b", "a"} {
		require.NoError(t, bus.Publish(ctx, export.Message{EventID: id, Event: []byte(`{}`)}))
	}
	for _, want := range []string{"a", "b", "a"} {
		require.Equal(t, want, (<-got).EventID)
	}
	require.Equal(t, 3, bus.Published())
}

func TestMemoryBus_TrimsToAboutItsBound(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	bus := export.NewMemoryBus(export.WithMaxLen(8))
	sub := bus.Subscribe()
	for i := range 100 {
		require.NoError(t, bus.Publish(ctx, export.Message{EventID: fmt.Sprint(i)}))
	}
	require.LessOrEqual(t, len(bus.Messages()), 10)
	require.GreaterOrEqual(t, len(bus.Messages()), 8)
	require.Equal(t, 100, bus.Published())
	m, err := sub.Next(ctx)
	require.NoError(t, err)
	require.Equal(t, fmt.Sprint(sub.Skipped()), m.EventID, "a slow reader skips what was trimmed")
}
