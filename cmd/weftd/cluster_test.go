package main

import (
	"io"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestOptions_OwnershipAndLeaseTTLAreValidated(t *testing.T) {
	none := func(string) string { return "" }
	_, err := parseOptions([]string{"--ownership", "many"}, none, io.Discard)
	require.ErrorContains(t, err, `ownership must be single-owner or cas-required, got "many"`)
	_, err = parseOptions([]string{"--lease-ttl", "5ms"}, none, io.Discard)
	require.ErrorContains(t, err, `lease TTL must be a duration of at least 100ms, got "5ms"`)
	opts, err := parseOptions(nil, func(k string) string {
		return map[string]string{"WEFT_LEASE_TTL": "3s", "WEFT_OWNERSHIP": "cas-required"}[k]
	}, io.Discard)
	require.NoError(t, err)
	require.Equal(t, "3s", opts.cluster.leaseTTL.String())
	require.Equal(t, "cas-required", opts.cluster.ownership)
}
