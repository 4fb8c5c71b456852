package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// go.mod lists every module the code imports as a direct requirement (for
// example github.com/robfig/cron/v3, which schedule/ imports).
func TestModules_EveryImportedModuleIsADirectRequirement(t *testing.T) {
	findings, err := checkDirectRequires("../..")
	require.NoError(t, err)
	require.Empty(t, findings)
}
