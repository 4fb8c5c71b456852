package definition

import (
	"strings"

	"go.yaml.in/yaml/v3"
)

// The keys each mapping of the YAML shape may hold (LoadYAML's doc comment
// shows what each means). A key not listed is refused with its path and, when
// one is close, the key it was probably meant to be; "input" values are
// free-form and never checked. At the top level, a key starting with "x-",
// or one whose value defines an anchor (&name), holds shared YAML for aliases
// and is ignored.
var (
	definitionKeys = []string{"apiVersion", "kind", "metadata", "spec", "planId", "name", "planVersion", "version",
		"displayName", "timeout", "steps", "compensation", "requiresApproval", "maxConcurrentRuns", "backpressure", "result", "retention"}
	metadataKeys = []string{"name", "version", "displayName"}
	specKeys     = []string{"timeout", "steps", "compensation", "requiresApproval", "maxConcurrentRuns", "backpressure", "result", "retention"}
	stepKeys     = []string{"name", "id", "activity", "agent", "queue", "dependsOn", "onFailure", "timeout",
		"heartbeatTimeout", "scheduleToStartTimeout", "retryPolicy", "input", "manual", "manualTimeout", "waitForSignal", "secrets"}
	retryKeys = []string{"maxRetries", "maxAttempts", "backoff", "initialDelay", "maxDelay", "multiplier",
		"backoffMultiplier", "retryableErrors"}
	signalWaitKeys   = []string{"name", "signal", "timeout"}
	compensationKeys = []string{"step", "operation", "action", "queue", "agent", "input", "timeout", "retryPolicy"}
	secretKeys       = []string{"name", "ref"}
)

// knownKeys refuses every key of mapping n (and of the mappings it merges)
// that is not one of keys.
func (l *yamlLoader) knownKeys(n *yaml.Node, path string, keys []string) {
	l.knownKeysDepth(resolve(n), path, keys, 0)
}

func (l *yamlLoader) knownKeysDepth(n *yaml.Node, path string, keys []string, depth int) {
	if n == nil || n.Kind != yaml.MappingNode || depth > maxYAMLMergeDepth {
		return
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		switch {
		case k == nil || k.Kind != yaml.ScalarNode:
			l.fail(path, "yaml.key", "%s must have string keys", mappingName(path))
		case k.ShortTag() == "!!merge":
			for _, src := range mergeSources(resolve(n.Content[i+1])) {
				l.knownKeysDepth(src, path, keys, depth+1)
			}
		case path == "" && (strings.HasPrefix(k.Value, "x-") || n.Content[i+1].Anchor != ""):
		case !contains(keys, k.Value):
			l.fail(join(path, k.Value), "yaml.unknown_key", "unknown key %s%s", short(k.Value), didYouMean(k.Value, keys))
		}
	}
}

// mappingName names a mapping in a message.
func mappingName(path string) string {
	if path == "" {
		return "the document"
	}
	return fieldName(path)
}

func contains(keys []string, key string) bool {
	for _, k := range keys {
		if k == key {
			return true
		}
	}
	return false
}

// apiNames are the API's names (and other spellings people reach for) of
// keys the YAML shape spells otherwise: "retry" is the API's name of
// retryPolicy, too far from it to be a typo.
var apiNames = map[string]string{
	"retry": "retryPolicy", "retry_policy": "retryPolicy", "retries": "retryPolicy",
	"depends_on": "dependsOn", "needs": "dependsOn", "after": "dependsOn",
	"wait_for_signal": "waitForSignal", "signal": "waitForSignal",
	"on_failure": "onFailure", "requires_approval": "requiresApproval",
	"timeout_ms": "timeout", "heartbeat_timeout_ms": "heartbeatTimeout",
	"schedule_to_start_timeout_ms": "scheduleToStartTimeout", "manual_timeout_ms": "manualTimeout",
	"max_attempts": "maxAttempts", "max_retries": "maxRetries", "initial_backoff_ms": "initialDelay",
	"max_backoff_ms": "maxDelay", "backoff_multiplier": "multiplier", "retryable_errors": "retryableErrors",
	"actions": "steps", "action_id": "name", "completion_mode": "manual", "result_action_id": "result",
	"retention_ms": "retention", "max_concurrent_runs": "maxConcurrentRuns", "plan_id": "planId",
	"plan_version": "planVersion", "display_name": "displayName", "signal_name": "name",
}

// didYouMean answers `; did you mean "k"?` for the key an unknown one was
// probably meant to be: the YAML key of an API name (apiNames), or the known
// key closest to it when that one is close enough to be a typo; else "".
func didYouMean(key string, keys []string) string {
	if k, ok := apiNames[key]; ok && contains(keys, k) {
		return "; did you mean " + short(k) + "?"
	}
	best, bestDist := "", -1
	for _, k := range keys {
		d := editDistance(strings.ToLower(key), strings.ToLower(k))
		if bestDist < 0 || d < bestDist {
			best, bestDist = k, d
		}
	}
	if bestDist < 0 || bestDist > max(1, len(best)/3) {
		return ""
	}
	return "; did you mean " + short(best) + "?"
}

// editDistance is the optimal-string-alignment distance between a and b, in
// bytes: insertions, deletions, substitutions and swaps of neighbours cost
// one each ("nmae" is one from "name"). Keys are short, and anything longer
// than a key cannot be close to one.
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return max(len(a), len(b))
	}
	d := make([][]int, len(a)+1)
	for i := range d {
		d[i] = make([]int, len(b)+1)
		d[i][0] = i
	}
	for j := range d[0] {
		d[0][j] = j
	}
	for i := 1; i <= len(a); i++ {
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			d[i][j] = min(d[i-1][j]+1, d[i][j-1]+1, d[i-1][j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				d[i][j] = min(d[i][j], d[i-2][j-2]+1)
			}
		}
	}
	return d[len(a)][len(b)]
}
