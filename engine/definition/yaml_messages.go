package definition

import (
	"regexp"
	"strings"
)

// apiPathInMessage matches an API field path a validator message names,
// such as "actions[0].id" or "actions[2].retry_policy.max_attempts".
var apiPathInMessage = regexp.MustCompile(`\bactions\[\d+\](?:\.[a-z_]+(?:\[\d+\])?)*`)

// quotedInMessage matches a quoted value in a message (short's quoting),
// which is the user's text and never rewritten.
var quotedInMessage = regexp.MustCompile(`"(?:[^"\\]|\\.)*"`)

// yamlTerms are the API's names a validator message may use, each with the
// YAML key that sets it (the loader's key table, yaml_keys.go).
var yamlTerms = strings.NewReplacer(
	"completion_mode is manual", "manual: true",
	"wait_for_signal", "waitForSignal",
	"result_action_id", "result",
	"retention_ms", "retention",
	"max_concurrent_runs", "maxConcurrentRuns",
	"max_attempts", "maxAttempts",
	"max_backoff_ms", "maxDelay",
	"initial_backoff_ms", "initialDelay",
	"backoff_multiplier", "multiplier",
	"retryable_errors", "retryableErrors",
	"retry_policy", "retryPolicy",
	"depends_on", "dependsOn",
	"heartbeat_timeout_ms", "heartbeatTimeout",
	"schedule_to_start_timeout_ms", "scheduleToStartTimeout",
	"manual_timeout_ms", "manualTimeout",
	"timeout_ms", "timeout",
	"on_failure", "onFailure",
	"plan_id", "planId",
	"plan_version", "planVersion",
	"display_name", "displayName",
	"requires_approval", "requiresApproval",
	"signal_name", "name",
	"an empty id", "an empty name",
	"an action", "a step",
	"one action", "one step",
	"actions", "steps",
)

// yamlMessage rewrites a validator message about the API field api, found
// at the YAML path at, in the YAML shape's terms: the field it begins with
// is named by its YAML key, the other fields it names by their YAML paths,
// and the API's names by the keys that set them ("depends_on[0] must name
// an action" becomes "dependsOn[0] must name a step").
func yamlMessage(msg, api, at string, paths *PathMap) string {
	if lead := fieldName(api); lead != "" && strings.HasPrefix(msg, lead+" ") {
		msg = fieldName(at) + msg[len(lead):]
	}
	msg = quotedInMessage.ReplaceAllStringFunc(msg, func(q string) string { return "\x00" + q + "\x00" })
	parts := strings.Split(msg, "\x00")
	for i := 0; i < len(parts); i += 2 { // the odd parts are quoted values
		parts[i] = apiPathInMessage.ReplaceAllStringFunc(parts[i], func(p string) string {
			return "\x01" + paths.YAMLPath("definition."+p) + "\x01"
		})
	}
	parts = strings.Split(strings.Join(parts, "\x00"), "\x00")
	for i := 0; i < len(parts); i += 2 {
		sub := strings.Split(parts[i], "\x01")
		for j := 0; j < len(sub); j += 2 { // the odd parts are YAML paths already
			sub[j] = yamlTerms.Replace(sub[j])
		}
		parts[i] = strings.Join(sub, "")
	}
	return strings.Join(parts, "")
}
