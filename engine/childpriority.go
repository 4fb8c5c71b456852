package engine

import (
	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/internal/record"
)

// childPriority answers the priority a sub-workflow step submits its child
// run with (docs/semantics.md#sub-workflows, #priority): the parent's
// submission's when it set one (a run submitted with --priority takes its
// whole tree with it); else zero when the child's definition sets its own
// (the child's plan knows its tasks best); else the parent's definition's
// (zero when that sets none either: the default, 3).
func childPriority(parent *record.Run, child *definition.Definition) int {
	switch {
	case parent.Priority != 0:
		return parent.Priority
	case child.Priority != 0:
		return 0
	}
	return parent.Definition.Priority
}
