package definition

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"go.yaml.in/yaml/v3"
)

// TestYAMLKeys_EveryExampleLoadsAndUsesItsKey: the key table's examples,
// which docs/definitions.md shows, are valid definitions, each using its key
// at its group's place.
func TestYAMLKeys_EveryExampleLoadsAndUsesItsKey(t *testing.T) {
	t.Parallel()
	for _, g := range YAMLKeys() {
		require.NotEmpty(t, g.About, g.Path)
		for _, k := range g.Keys {
			require.NotEmpty(t, k.Means, "%s.%s", g.Path, k.Name)
			_, _, err := ReadYAML([]byte(k.Example))
			require.NoError(t, err, "%s.%s's example:\n%s", g.Path, k.Name, k.Example)
			require.Contains(t, k.Example, k.Name+":", "%s.%s's example uses the key", g.Path, k.Name)
			require.Empty(t, indentationHint([]byte(k.Example)), "%s.%s", g.Path, k.Name)
		}
	}
}

// TestIndentationHint_NoneForAValidDocument: the hint never blames a line
// of a document that parses.
func TestIndentationHint_NoneForAValidDocument(t *testing.T) {
	t.Parallel()
	for _, doc := range []string{
		"planId: p\nsteps:\n- name: a\n  input: |\n     free\n       text\n- name: b\n",
		"planId: p\nsteps:\n  - name: a\n    input: {a: [1,\n      2]}\n    retryPolicy:\n      maxAttempts: 2\n  - name: b\n",
		"x-common: &c\n  timeout: 1m\nsteps:\n  - <<: *c\n    name: a\n",
	} {
		var n yaml.Node
		require.NoError(t, yaml.Unmarshal([]byte(doc), &n), doc)
		require.Empty(t, indentationHint([]byte(doc)), doc)
	}
}

// TestYAMLSyntaxError_AnIndentationMistakeNamesItsLine: the parser reports
// the enclosing block's line; the hint names the misindented one.
func TestYAMLSyntaxError_AnIndentationMistakeNamesItsLine(t *testing.T) {
	t.Parallel()
	_, err := LoadYAML([]byte("planId: p\nsteps:\n  - name: a\n    activity: x\n   queue: q\n  - name: b\n"))
	require.ErrorContains(t, err, "line 5 is indented 3 spaces")
}

// TestReadYAML_ValidatorMessagesUseYAMLTerms: no API name or path leaks
// into a message about a YAML file; a quoted value is left as written.
func TestReadYAML_ValidatorMessagesUseYAMLTerms(t *testing.T) {
	t.Parallel()
	_, _, err := ReadYAML([]byte("planId: p\nsteps:\n  - name: actions\n  - name: b\n    dependsOn: [\"\"]\n  - name: actions\n    dependsOn: [zz]\n"))
	require.Error(t, err)
	msg := err.Error()
	require.Contains(t, msg, `steps[2].name: name must be unique: "actions" is also steps[0].name`)
	require.Contains(t, msg, "dependsOn[0] must name a step")
	require.NotRegexp(t, `depends_on|actions\[|\.id\b| an action`, msg)
	require.False(t, strings.Contains(msg, `"steps" is also`), "a quoted value is the user's text")
}

// TestUnknownKey_RetrySuggestsRetryPolicy: an API name of a key is answered
// with the YAML key, though too far from it to be a typo.
func TestUnknownKey_RetrySuggestsRetryPolicy(t *testing.T) {
	t.Parallel()
	for api, key := range map[string]string{"retry": "retryPolicy", "depends_on": "dependsOn", "wait_for_signal": "waitForSignal"} {
		_, err := LoadYAML([]byte("planId: p\nsteps:\n  - name: a\n    " + api + ": x\n"))
		require.ErrorContains(t, err, `did you mean "`+key+`"?`)
	}
}
