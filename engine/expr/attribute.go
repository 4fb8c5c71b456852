package expr

import (
	"encoding/json"
	"math"
	"strconv"
	"time"

	"cel.dev/cel-go/common/types"
)

// EvalSearchAttribute evaluates a JSON program as a search attribute's
// value (docs/semantics.md#search-attributes): its type — keyword for a
// string, int for an int (or a uint up to the largest int), double for a
// finite double, bool, time for a timestamp — and its value as JSON (a
// time as an RFC 3339 string in UTC). Any other value is refused naming
// the program's path.
func (p *Program) EvalSearchAttribute(v Vars) (typ string, raw json.RawMessage, err error) {
	out, err := p.eval(v)
	if err != nil {
		return "", nil, err
	}
	switch x := out.(type) {
	case types.String:
		b, _ := json.Marshal(string(x)) // a string always marshals
		return "keyword", b, nil
	case types.Int:
		return "int", strconv.AppendInt(nil, int64(x), 10), nil
	case types.Uint:
		if uint64(x) <= math.MaxInt64 {
			return "int", strconv.AppendUint(nil, uint64(x), 10), nil
		}
	case types.Double:
		if f := float64(x); !math.IsNaN(f) && !math.IsInf(f, 0) {
			return "double", strconv.AppendFloat(nil, f, 'g', -1, 64), nil
		}
	case types.Bool:
		return "bool", strconv.AppendBool(nil, bool(x)), nil
	case types.Timestamp:
		b, _ := json.Marshal(x.Time.UTC().Format(time.RFC3339Nano))
		return "time", b, nil
	}
	return "", nil, errorf(p.path, RuleResultType,
		"a search attribute's expression must be a string, an int, a finite double, a bool or a timestamp, and its value is a %s", out.Type().TypeName())
}
