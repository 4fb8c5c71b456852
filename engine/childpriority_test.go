package engine

import (
	"cmp"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/engine/internal/record"
	"github.com/weft-dev/weft/engine/runstate"
	"github.com/weft-dev/weft/store"
)

// The child-priority scenario (docs/semantics.md#sub-workflows, #priority)
// runs on every store backend, with the others (TestScenarios).
func init() {
	scenarios["SubWorkflow_AChildRunsAtItsParentsPriorityUnlessItsDefinitionSetsOne"] = scenarioSubWorkflow_AChildRunsAtItsParentsPriorityUnlessItsDefinitionSetsOne
}

// taskPriorities answers the priority of each task record of the run.
func (b *bundle) taskPriorities(runID string) []int {
	b.t.Helper()
	res, err := b.store.Scan(b.ctx, &store.ScanParams{Prefix: record.TaskPrefix(runID), Limit: store.MaxScanLimit})
	require.NoError(b.t, err)
	var out []int
	for _, it := range res.Items {
		var rec record.Task
		require.NoError(b.t, record.DecodeTask(it.Value, &rec))
		out = append(out, cmp.Or(rec.Priority, record.DefaultPriority))
	}
	return out
}

func scenarioSubWorkflow_AChildRunsAtItsParentsPriorityUnlessItsDefinitionSetsOne(t *testing.T, b *bundle) {
	for _, tc := range []struct {
		name                           string
		submitted, parentDef, childDef int
		want                           int
	}{
		{"the parent's submission", 1, 0, 0, 1},
		{"the parent's submission over the child's definition", 2, 4, 5, 2},
		{"the child's definition over the parent's", 0, 1, 4, 4},
		{"the parent's definition", 0, 2, 0, 2},
		{"the child's definition alone", 0, 0, 5, 5},
		{"the default", 0, 0, 0, 3},
	} {
		child := inlineChild()
		child.Priority = tc.childDef
		def := withChild(child, `{}`)
		def.Priority = tc.parentDef
		res, err := b.eng.SubmitRun(b.ctx, SubmitParams{TenantID: tenant, Definition: def, Start: true, Priority: tc.submitted})
		require.NoError(t, err, tc.name)
		b.complete(b.poll("act-a"), `1`)
		b.tick()
		c := b.childOf(res.Run.RunID, "child")
		require.Equal(t, tc.want, c.Priority, "%s: GetRun shows the child's priority", tc.name)
		require.Equal(t, []int{tc.want}, b.taskPriorities(c.RunID), "%s: the child's task carries it", tc.name)
		b.complete(b.poll("act-c1"), `{}`)
		b.tick()
		b.complete(b.poll("act-b"), `1`)
		b.tick()
		require.Equal(t, runstate.RunCompleted, b.run(res.Run.RunID).Status, tc.name)
	}
}
