package eventpb

import (
	"encoding/json"
	"strconv"
	"time"

	"github.com/weft-dev/weft/engine/runstate"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// SearchAttributes answers a run's search attributes as the API's map
// (docs/semantics.md#search-attributes); an attribute whose stored value
// does not read as its type is left out (never stored by this engine).
func SearchAttributes(attrs []runstate.SearchAttribute) map[string]*weftv1.SearchAttributeValue {
	if len(attrs) == 0 {
		return nil
	}
	out := make(map[string]*weftv1.SearchAttributeValue, len(attrs))
	for _, a := range attrs {
		if v := SearchAttributeValue(a.Type, a.Value); v != nil {
			out[a.Name] = v
		}
	}
	return out
}

// SearchAttributeValue answers one stored attribute value (its type's name
// and its JSON) as the API's value, or nil when it does not read.
func SearchAttributeValue(typ string, raw json.RawMessage) *weftv1.SearchAttributeValue {
	switch typ {
	case "keyword":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_KeywordValue{KeywordValue: s}}
	case "int":
		i, err := strconv.ParseInt(string(raw), 10, 64)
		if err != nil {
			return nil
		}
		return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_IntValue{IntValue: i}}
	case "double":
		f, err := strconv.ParseFloat(string(raw), 64)
		if err != nil {
			return nil
		}
		return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_DoubleValue{DoubleValue: f}}
	case "bool":
		var b bool
		if json.Unmarshal(raw, &b) != nil {
			return nil
		}
		return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_BoolValue{BoolValue: b}}
	case "time":
		var s string
		if json.Unmarshal(raw, &s) != nil {
			return nil
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return nil
		}
		return &weftv1.SearchAttributeValue{Value: &weftv1.SearchAttributeValue_TimeValue{TimeValue: Timestamp(t)}}
	}
	return nil
}

// SearchAttributeJSON answers an API value as its type's name and its
// JSON, as the engine takes and stores it; ok false when no value is set.
func SearchAttributeJSON(v *weftv1.SearchAttributeValue) (typ string, raw json.RawMessage, ok bool) {
	switch x := v.GetValue().(type) {
	case *weftv1.SearchAttributeValue_KeywordValue:
		b, _ := json.Marshal(x.KeywordValue) // a string always marshals
		return "keyword", b, true
	case *weftv1.SearchAttributeValue_IntValue:
		return "int", strconv.AppendInt(nil, x.IntValue, 10), true
	case *weftv1.SearchAttributeValue_DoubleValue:
		b, err := json.Marshal(x.DoubleValue)
		if err != nil { // NaN or an infinity: the engine refuses the double
			return "double", json.RawMessage(`"not finite"`), true
		}
		return "double", b, true
	case *weftv1.SearchAttributeValue_BoolValue:
		return "bool", strconv.AppendBool(nil, x.BoolValue), true
	case *weftv1.SearchAttributeValue_TimeValue:
		if x.TimeValue == nil || x.TimeValue.CheckValid() != nil {
			return "time", json.RawMessage(`null`), true
		}
		b, _ := json.Marshal(x.TimeValue.AsTime().UTC().Format(time.RFC3339Nano))
		return "time", b, true
	}
	return "", nil, false
}
