package keyspace

import (
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/store"
)

// root is the module's root, from this package's directory.
const root = "../.."

// docs/persisted-format.md's table of records names exactly the registry's
// prefixes: a prefix added to one is added to the other.
func TestKeyspace_PersistedFormatListsExactlyTheRegistry(t *testing.T) {
	doc, err := os.ReadFile(filepath.Join(root, "docs", "persisted-format.md"))
	require.NoError(t, err)
	listed := map[string]bool{}
	key := regexp.MustCompile("`([a-z]+):[^`]*`")
	for line := range strings.SplitSeq(string(doc), "\n") {
		if !strings.HasPrefix(line, "| `") {
			continue
		}
		first := strings.Split(line, "|")[1] // the key column
		for _, m := range key.FindAllStringSubmatch(first, -1) {
			listed[m[1]] = true
		}
	}
	var registry []string
	for _, p := range All {
		registry = append(registry, p.Name)
	}
	documented := slices.Sorted(func(yield func(string) bool) {
		for name := range listed {
			if !yield(name) {
				return
			}
		}
	})
	slices.Sort(registry)
	require.Equal(t, registry, documented)
}

// Every prefix is named once, says who owns it, what it holds and how it
// sorts, and no name starts another's keys.
func TestKeyspace_EachPrefixIsDefinedOnce(t *testing.T) {
	seen := map[string]bool{}
	for _, p := range All {
		require.False(t, seen[p.Name], "prefix %s defined twice", p.Name)
		seen[p.Name] = true
		require.NotEmpty(t, p.Owner, p.Name)
		require.NotEmpty(t, p.Holds, p.Name)
		require.NotEmpty(t, p.Order, p.Name)
		require.Equal(t, store.EscapeComponent(p.Name), p.Name, "a prefix needs no escaping")
	}
}

// A prefix's keys are the store's codec: its name, then the components,
// escaped as store.Key and store.KeyPrefix escape them.
func TestPrefix_KeysAreTheStoresCodec(t *testing.T) {
	for _, c := range [][]string{{"r1"}, {"a:b", "50%", ""}, {"t", "q", store.Uint64(7)}} {
		require.Equal(t, store.Key(append([]string{Run.Name}, c...)...), Run.Key(c...))
		require.Equal(t, store.KeyPrefix(append([]string{Ready.Name}, c...)...), Ready.KeyPrefix(c...))
	}
	require.Equal(t, store.KeyPrefix(Timer.Name), Timer.KeyPrefix())
}

// No package spells a prefix: every key is built through the registry.
// Neither a key built from a literal first component (store.Key("wf", …))
// nor a string that starts with a registered prefix and its separator
// ("wf:…") appears in any package's code. (The store's own code and its
// conformance suite, which exercise the codec with keys of their own, are
// not Weft's records.) The walk covers every package of the module, the
// audit log and the schedules among them.
func TestKeyspace_NoPackageSpellsAPrefix(t *testing.T) {
	literal := regexp.MustCompile(`store\.(Key|KeyPrefix)\("`)
	var names []string
	for _, p := range All {
		names = append(names, regexp.QuoteMeta(p.Name))
	}
	spelled := regexp.MustCompile(`"(` + strings.Join(names, "|") + `):[^ ]`) // "task: %w" is a message
	skip := []string{"store", "conformance/storetest", "gen", "node_modules", "client/ts", "console"}
	visited := map[string]bool{}
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && rel != "." || slices.Contains(skip, rel) {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		visited[filepath.ToSlash(filepath.Dir(rel))] = true
		src, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if loc := literal.FindIndex(src); loc != nil {
			t.Errorf("%s spells a key prefix (%s…): build the key through engine/keyspace", rel, src[loc[0]:loc[1]])
		}
		if loc := spelled.FindIndex(src); loc != nil && !strings.HasPrefix(rel, "engine/keyspace/") {
			t.Errorf("%s spells a key prefix (%s): build the key through engine/keyspace", rel, src[loc[0]:loc[1]])
		}
		return nil
	})
	require.NoError(t, err)
	for _, dir := range []string{"engine", "engine/runlog", "engine/internal/record", "engine/internal/acceptance",
		"engine/internal/admission", "engine/internal/pollers", "engine/internal/retention", "audit", "schedule", "export",
		"server", "cmd/weftd", "cmd/weft"} {
		require.True(t, visited[dir], "the walk read %s", dir)
	}
}
