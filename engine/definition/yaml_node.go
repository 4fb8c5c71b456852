package definition

import (
	"encoding/json"
	"math"

	"go.yaml.in/yaml/v3"
)

// resolve follows documents and aliases to the node they stand for, or nil.
func resolve(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && hops <= maxYAMLAliasHops; hops++ {
		switch n.Kind {
		case yaml.AliasNode:
			n = n.Alias
		case yaml.DocumentNode:
			if len(n.Content) == 0 {
				return nil
			}
			n = n.Content[0]
		default:
			return n
		}
	}
	return nil
}

// mapping answers n when it is a mapping, else nil.
func mapping(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.MappingNode {
		return n
	}
	return nil
}

// get answers the resolved value of key in mapping n, looking through merge
// keys (<<), or nil when n is no mapping or key is absent or null.
func get(n *yaml.Node, key string) *yaml.Node {
	return getDepth(resolve(n), key, 0)
}

// getDepth is get with a bound on nested merges.
func getDepth(n *yaml.Node, key string, depth int) *yaml.Node {
	if n == nil || n.Kind != yaml.MappingNode || depth > maxYAMLMergeDepth {
		return nil
	}
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		switch {
		case k == nil || k.Kind != yaml.ScalarNode:
		case k.ShortTag() == "!!merge":
			merges = append(merges, resolve(n.Content[i+1]))
		case k.Value == key:
			return nonNull(resolve(n.Content[i+1]))
		}
	}
	for _, m := range merges {
		for _, src := range mergeSources(m) {
			if v := getDepth(src, key, depth+1); v != nil {
				return v
			}
		}
	}
	return nil
}

// mergeSources answers the mappings a merge key's value names.
func mergeSources(m *yaml.Node) []*yaml.Node {
	if m == nil || m.Kind != yaml.SequenceNode {
		return []*yaml.Node{m}
	}
	out := make([]*yaml.Node, 0, len(m.Content))
	for _, c := range m.Content {
		out = append(out, resolve(c))
	}
	return out
}

// nonNull answers n, or nil when it is a YAML null.
func nonNull(n *yaml.Node) *yaml.Node {
	if n == nil || (n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null") {
		return nil
	}
	return n
}

// join answers path.key, or key at the top level.
func join(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

// str reads a scalar as a string.
func (l *yamlLoader) str(n *yaml.Node, path string) string {
	if n.Kind != yaml.ScalarNode {
		l.fail(path, "yaml.type", "%s must be a string", fieldName(path))
		return ""
	}
	return n.Value
}

// strList reads a list of strings; a single string is a list of one.
func (l *yamlLoader) strList(n *yaml.Node, path string) []string {
	if n.Kind == yaml.ScalarNode {
		return []string{n.Value}
	}
	if n.Kind != yaml.SequenceNode {
		l.fail(path, "yaml.type", "%s must be a list of strings", fieldName(path))
		return nil
	}
	out := make([]string, 0, len(n.Content))
	for i, c := range n.Content {
		if c = resolve(c); c != nil {
			out = append(out, l.str(c, indexPath(path, i)))
		}
	}
	return out
}

// integer reads a YAML integer that fits in an int32.
func (l *yamlLoader) integer(n *yaml.Node, path string) (int, bool) {
	var i int64
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" || n.Decode(&i) != nil || i < math.MinInt32 || i > math.MaxInt32 {
		l.fail(path, "yaml.integer", "%s must be an integer", fieldName(path))
		return 0, false
	}
	return int(i), true
}

// number reads a finite YAML number.
func (l *yamlLoader) number(n *yaml.Node, path string) float64 {
	var f float64
	tag := n.ShortTag()
	if n.Kind != yaml.ScalarNode || (tag != "!!int" && tag != "!!float") || n.Decode(&f) != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		l.fail(path, "yaml.number", "%s must be a finite number", fieldName(path))
		return 0
	}
	return f
}

// boolean reads a YAML boolean.
func (l *yamlLoader) boolean(n *yaml.Node, path string) bool {
	var b bool
	if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" || n.Decode(&b) != nil {
		l.fail(path, "yaml.bool", "%s must be true or false", fieldName(path))
		return false
	}
	return b
}

// input converts any YAML value to JSON.
func (l *yamlLoader) input(n *yaml.Node, path string) json.RawMessage {
	v, problem := l.jsonValue(n, 0)
	if problem == "" {
		b, err := json.Marshal(v)
		if err == nil {
			return b
		}
		problem = "is not representable as JSON"
	}
	l.fail(path, "yaml.input", "%s %s", fieldName(path), problem)
	return nil
}

// jsonValue converts one node to a value encoding/json can marshal, or
// answers what is wrong with it.
func (l *yamlLoader) jsonValue(n *yaml.Node, depth int) (any, string) {
	n = resolve(n)
	l.budget--
	switch {
	case l.budget < 0:
		return nil, "expands to too many values (aliases)"
	case depth > maxYAMLInputDepth:
		return nil, "is nested too deeply"
	case n == nil:
		return nil, ""
	}
	switch n.Kind {
	case yaml.ScalarNode:
		return jsonScalar(n)
	case yaml.SequenceNode:
		out := make([]any, 0, len(n.Content))
		for _, c := range n.Content {
			v, problem := l.jsonValue(c, depth+1)
			if problem != "" {
				return nil, problem
			}
			out = append(out, v)
		}
		return out, ""
	case yaml.MappingNode:
		return l.jsonObject(n, depth)
	}
	return nil, "holds a node that is not JSON"
}

// jsonObject converts a mapping; explicit keys win over merged ones, and the
// first of repeated keys wins.
func (l *yamlLoader) jsonObject(n *yaml.Node, depth int) (any, string) {
	out := make(map[string]any, len(n.Content)/2)
	var merges []*yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode {
			return nil, "has a key that is not a string"
		}
		if k.ShortTag() == "!!merge" {
			merges = append(merges, n.Content[i+1])
			continue
		}
		if _, dup := out[k.Value]; dup {
			continue
		}
		v, problem := l.jsonValue(n.Content[i+1], depth+1)
		if problem != "" {
			return nil, problem
		}
		out[k.Value] = v
	}
	for _, m := range merges {
		if problem := l.mergeJSON(out, m, depth+1); problem != "" {
			return nil, problem
		}
	}
	return out, ""
}

// mergeJSON adds a merge key's mappings' entries that out lacks.
func (l *yamlLoader) mergeJSON(out map[string]any, m *yaml.Node, depth int) string {
	for _, src := range mergeSources(resolve(m)) {
		if src == nil || src.Kind != yaml.MappingNode {
			return "has a merge key (<<) that names no mapping"
		}
		v, problem := l.jsonValue(src, depth)
		if problem != "" {
			return problem
		}
		obj, _ := v.(map[string]any)
		for k, x := range obj {
			if _, ok := out[k]; !ok {
				out[k] = x
			}
		}
	}
	return ""
}

// jsonScalar converts a scalar by its resolved tag; anything that is not
// null, a boolean or a number (timestamps, binary, custom tags) stays text.
func jsonScalar(n *yaml.Node) (any, string) {
	switch n.ShortTag() {
	case "!!null":
		return nil, ""
	case "!!bool":
		var b bool
		if n.Decode(&b) == nil {
			return b, ""
		}
	case "!!int":
		var i int64
		if n.Decode(&i) == nil {
			return i, ""
		}
		var u uint64
		if n.Decode(&u) == nil {
			return u, ""
		}
	case "!!float":
		var f float64
		if n.Decode(&f) == nil {
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, "holds .nan or .inf, which JSON cannot carry"
			}
			return f, ""
		}
	}
	return n.Value, ""
}
