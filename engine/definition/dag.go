package definition

import "strings"

// edge is one checked dependency: the action at index to, named by
// depends_on[pos] of the action that has the edge.
type edge struct {
	to, pos int
}

// checkDAG checks the dependency graph when any action declares depends_on
// (docs/semantics.md#dag-validation): no self-dependency, no duplicate in a list,
// every dependency exists, at least one root, no cycle. Independent chains
// are allowed.
func (v *violations) checkDAG(actions []Action) {
	if !hasDependencies(actions) {
		return
	}
	index := make(map[string]int, len(actions))
	for i, a := range actions {
		if _, dup := index[a.ID]; !dup && a.ID != "" {
			index[a.ID] = i
		}
	}
	graph := make([][]edge, len(actions))
	roots := 0
	for i, a := range actions {
		if len(a.DependsOn) == 0 {
			roots++
		}
		graph[i] = v.checkDependsOn(actionPath(i), a, index)
	}
	if roots == 0 {
		v.add("actions", "dag.has_root", "at least one action must have no depends_on (a root), got none")
	}
	v.checkCycles(actions, graph)
}

// hasDependencies reports whether any action declares depends_on.
func hasDependencies(actions []Action) bool {
	for _, a := range actions {
		if len(a.DependsOn) > 0 {
			return true
		}
	}
	return false
}

// checkDependsOn checks one action's depends_on list and answers its edges
// to existing actions.
func (v *violations) checkDependsOn(p string, a Action, index map[string]int) []edge {
	p += ".depends_on"
	if len(a.DependsOn) > MaxActions {
		v.add(p, "dag.depends_on_max_items", "depends_on may list at most %d actions, got %d", MaxActions, len(a.DependsOn))
	}
	seen := make(map[string]int, len(a.DependsOn))
	var edges []edge
	for j, dep := range a.DependsOn {
		field := indexPath(p, j)
		to, exists := index[dep]
		first, dup := seen[dep]
		switch {
		case dep == "":
			v.add(field, "dag.dependency_exists", "depends_on[%d] must name an action, got an empty id", j)
		case dep == a.ID:
			v.add(field, "dag.no_self_dependency", "an action cannot depend on itself: %s", cycleID(dep))
		case dup:
			v.add(field, "dag.dependency_unique", "depends_on must not repeat an id: %s is also depends_on[%d]", cycleID(dep), first)
		case !exists:
			v.add(field, "dag.dependency_exists", "depends_on[%d] must name an action of the definition, got %s", j, short(dep))
		default:
			edges = append(edges, edge{to: to, pos: j})
		}
		if !dup {
			seen[dep] = j
		}
	}
	return edges
}

// frame is one node of the depth-first search and its next edge to follow.
type frame struct {
	node, next int
}

// checkCycles reports every back edge a depth-first search meets, starting
// from each action in list order and following depends_on in list order, so
// the report is deterministic. It is iterative: no recursion depth to exhaust.
func (v *violations) checkCycles(actions []Action, graph [][]edge) {
	const (
		unvisited = iota
		onStack
		done
	)
	state := make([]uint8, len(graph))
	for start := range graph {
		if state[start] != unvisited {
			continue
		}
		state[start] = onStack
		stack := []frame{{node: start}}
		for len(stack) > 0 {
			top := &stack[len(stack)-1]
			if top.next == len(graph[top.node]) {
				state[top.node] = done
				stack = stack[:len(stack)-1]
				continue
			}
			e := graph[top.node][top.next]
			top.next++
			switch state[e.to] {
			case unvisited:
				state[e.to] = onStack
				stack = append(stack, frame{node: e.to})
			case onStack:
				v.addCycle(actions, stack, e)
			}
		}
	}
}

// maxCyclePath is the most ids a cycle message spells out.
const maxCyclePath = 32

// addCycle reports the cycle closed by e from the top of stack, as the path
// of ids from e's target down the stack and back to it.
func (v *violations) addCycle(actions []Action, stack []frame, e edge) {
	from := stack[len(stack)-1].node
	start := len(stack) - 1
	for start > 0 && stack[start].node != e.to {
		start--
	}
	var b strings.Builder
	for k, f := range stack[start:] {
		if k == maxCyclePath {
			b.WriteString("… -> ")
			break
		}
		b.WriteString(cycleID(actions[f.node].ID))
		b.WriteString(" -> ")
	}
	b.WriteString(cycleID(actions[e.to].ID))
	field := indexPath(actionPath(from)+".depends_on", e.pos)
	v.add(field, "dag.no_cycle", "depends_on must not form a cycle: %s", b.String())
}

// cycleID spells an action id for a message: bare when it is a short valid
// id, quoted and cut otherwise.
func cycleID(id string) string {
	if len(id) <= 40 && idPattern.MatchString(id) {
		return id
	}
	return short(id)
}
