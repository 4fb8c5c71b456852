package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestStatesImports_TheWordingsThatCount(t *testing.T) {
	require.True(t, statesImports("Package x does y.\n\nLayering: imports store only.\n"))
	require.True(t, statesImports("It imports only the standard library."))
	require.True(t, statesImports("It may import gen/ and connect-go."))
	require.False(t, statesImports("Package x does y."))
}
