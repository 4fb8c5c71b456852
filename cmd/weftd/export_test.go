package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestBusURL_EmbeddedExportsOnlyWhenABusIsNamed is the table of where run
// events go: an embedded weftd has no bus another process could read, so it
// writes no outbox unless --bus names one; a cluster exports to Redis.
func TestBusURL_EmbeddedExportsOnlyWhenABusIsNamed(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"embedded default", nil, busNone},
		{"embedded, memory named", []string{"--bus", "memory"}, busMemory},
		{"embedded, redis named", []string{"--bus", "redis://10.0.0.2:6379"}, "redis://10.0.0.2:6379"},
		{"cluster default", []string{"--store", "postgres://weft@db/weft"}, "redis://127.0.0.1:6379"},
		{"cluster, lease redis", []string{"--store", "postgres://weft@db/weft", "--redis", "redis://r:6379"}, "redis://r:6379"},
		{"cluster, none named", []string{"--store", "postgres://weft@db/weft", "--bus", "none"}, busNone},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts, err := parseOptions(tc.args, func(string) string { return "" }, io.Discard)
			require.NoError(t, err)
			require.Equal(t, tc.want, busURL(opts))
		})
	}
}
