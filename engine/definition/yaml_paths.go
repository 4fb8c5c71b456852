package definition

import (
	"strings"
)

// PathMap maps the API's field paths of a definition read from YAML (as
// Validate and the server name them: "actions[2].timeout_ms", also with a
// "definition." prefix) onto the YAML paths they came from
// ("spec.steps[2].timeout"), so that every error about a YAML file names
// the place to edit in it.
type PathMap struct {
	steps        string            // where the step list is: "spec.steps" or "steps"
	top          map[string]string // a top-level API field → its YAML path
	compensation map[int]string    // an action's index → its compensation entry
	// children place the paths inside an action's inline sub-workflow, by
	// the action's index; prefix is where a child's own paths are.
	children map[int]*PathMap
	prefix   string
}

// yamlKeys are the YAML spellings of the API's field names.
var yamlKeys = map[string]string{
	"id": "name", "depends_on": "dependsOn", "retry": "retryPolicy", "max_attempts": "maxAttempts",
	"strategy": "backoff", "initial_backoff_ms": "initialDelay", "max_backoff_ms": "maxDelay",
	"backoff_multiplier": "multiplier", "retryable_errors": "retryableErrors", "timeout_ms": "timeout", "retention_ms": "retention",
	"heartbeat_timeout_ms": "heartbeatTimeout", "schedule_to_start_timeout_ms": "scheduleToStartTimeout", "on_failure": "onFailure", "completion_mode": "manual",
	"wait_for_signal": "waitForSignal", "signal_name": "name", "manual_timeout_ms": "manualTimeout",
	"operation": "action", "sleep_ms": "sleep", "sleep_until": "sleepUntil", "max_iterations": "maxIterations",
	"parent_close": "parentClose", "plan_id": "plan", "plan_version": "version",
	"for_each": "forEach", "max_concurrency": "maxConcurrency",
}

// YAMLPath answers the YAML path of an API field path; a path it cannot
// place is answered as it is.
func (m *PathMap) YAMLPath(api string) string {
	if m == nil {
		return api
	}
	p := m.yamlPath(api)
	if m.prefix != "" {
		return join(m.prefix, p)
	}
	return p
}

// yamlPath is YAMLPath inside the document (or inline sub-workflow) m maps.
func (m *PathMap) yamlPath(api string) string {
	rest := strings.TrimPrefix(api, "definition.")
	if rest == "actions" {
		return m.steps
	}
	if !strings.HasPrefix(rest, "actions[") {
		head, tail, _ := strings.Cut(rest, ".")
		if p, ok := m.top[head]; ok {
			return joinRest(p, tail)
		}
		return api
	}
	end := strings.IndexByte(rest, ']')
	i, ok := atoi(rest[len("actions["):max(end, len("actions["))])
	if end < 0 || !ok {
		return api
	}
	base, tail := indexPath(m.steps, i), strings.TrimPrefix(rest[end+1:], ".")
	if p, ok := m.childYAMLPath(i, tail); ok {
		return p
	}
	if hook, ok := m.compensation[i]; ok && (tail == "compensation" || strings.HasPrefix(tail, "compensation.")) {
		base, tail = hook, strings.TrimPrefix(strings.TrimPrefix(tail, "compensation"), ".")
	}
	return joinRest(base, tail)
}

// joinRest appends the YAML spelling of an API path's remaining segments.
func joinRest(base, tail string) string {
	if tail == "" {
		return base
	}
	// An input's members are the user's keys, spelled as they are: only
	// the path up to the input is renamed.
	var data string
	if head, rest, ok := strings.Cut(tail, "input"); ok && (head == "" || strings.HasSuffix(head, ".")) &&
		(rest == "" || rest[0] == '.' || rest[0] == '[') {
		tail, data = head+"input", rest
	}
	segs := strings.Split(tail, ".")
	prev := base[strings.LastIndexByte(base, '.')+1:]
	for j, s := range segs {
		name, index, _ := strings.Cut(s, "[")
		raw := name
		// strategy is a retry policy's backoff; a run concurrency's
		// strategy keeps its name.
		if y, ok := yamlKeys[name]; ok && (name != "strategy" || prev == "retry") {
			name = y
		}
		prev = raw
		if index != "" {
			name += "[" + index
		}
		segs[j] = name
	}
	return join(base, strings.Join(segs, ".")) + data
}

// atoi reads a small non-negative decimal index.
func atoi(s string) (int, bool) {
	if s == "" || len(s) > 6 {
		return 0, false
	}
	n := 0
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int(c-'0')
	}
	return n, true
}
