package server

import (
	"testing"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"github.com/stretchr/testify/require"
)

// renderPath answers elements as "name[index].name".
func renderPath(els []*validate.FieldPathElement) []string {
	var out []string
	for _, e := range els {
		s := e.GetFieldName()
		if idx, ok := e.GetSubscript().(*validate.FieldPathElement_Index); ok {
			s += "[" + string(rune('0'+idx.Index)) + "]"
		}
		out = append(out, s)
	}
	return out
}

func TestFieldPath_SplitsNamesAndIndexes(t *testing.T) {
	t.Parallel()
	cases := map[string][]string{
		"run_id":                              {"run_id"},
		"definition.actions[2].id":            {"definition", "actions[2]", "id"},
		"definition.actions[0].depends_on[1]": {"definition", "actions[0]", "depends_on[1]"},
		"Weft-Tenant":                         {"Weft-Tenant"},
		"spec.steps[x].name":                  {"spec.steps[x].name"},
		"upstream[\"a.b\"]":                   {"upstream[\"a.b\"]"},
	}
	for path, want := range cases {
		require.Equal(t, want, renderPath(fieldPathElements(path)), path)
	}
}
