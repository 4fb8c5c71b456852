package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/internal/testkit"
	"github.com/weft-dev/weft/server"
)

func TestHealth_ReportsEveryServiceServing(t *testing.T) {
	t.Parallel()
	h, err := server.New(server.Config{})
	require.NoError(t, err)
	url := testkit.Serve(t, h)
	var out bytes.Buffer
	code, err := run(context.Background(), []string{"--addr", url, "health"}, func(string) string { return "" }, &out, &out)
	require.NoError(t, err)
	require.Equal(t, 0, code)
	for _, svc := range services {
		require.Contains(t, out.String(), svc)
	}
	require.Equal(t, len(services), strings.Count(out.String(), " SERVING\n"))
}

func TestHealth_UnreachableServerNamesTheAddress(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	code, err := run(context.Background(), []string{"--addr", "http://127.0.0.1:1", "health"}, func(string) string { return "" }, &out, &out)
	require.Equal(t, 1, code)
	require.ErrorContains(t, err, "weftd at http://127.0.0.1:1 is not reachable")
}

func TestUnknownCommand_ExitsTwoWithUsage(t *testing.T) {
	t.Parallel()
	var out bytes.Buffer
	code, err := run(context.Background(), []string{"frobnicate"}, func(string) string { return "" }, &out, &out)
	require.Equal(t, 2, code)
	require.ErrorContains(t, err, `unknown command "frobnicate"`)
	require.Contains(t, out.String(), "usage: weft")
}
