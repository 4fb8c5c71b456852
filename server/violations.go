package server

import (
	"regexp"
	"strconv"
	"strings"

	"buf.build/gen/go/bufbuild/protovalidate/protocolbuffers/go/buf/validate"
	"google.golang.org/protobuf/proto"

	"github.com/weft-dev/weft/engine"
)

// violationsProto converts the engine's field violations to the
// buf.validate.Violations detail protovalidate failures carry, so clients
// read engine and request validation the same way.
func violationsProto(in []engine.FieldViolation) *validate.Violations {
	out := &validate.Violations{}
	for _, v := range in {
		pv := &validate.Violation{RuleId: proto.String(v.Rule), Message: proto.String(v.Message)}
		if v.Field != "" {
			pv.Field = &validate.FieldPath{Elements: fieldPathElements(v.Field)}
		}
		out.Violations = append(out.Violations, pv)
	}
	return out
}

// pathSegment is one "name" or "name[index]" of a field path.
var pathSegment = regexp.MustCompile(`^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$`)

// fieldPathElements splits "definition.actions[2].id" into elements with a
// field name and, where there is one, an index subscript. A path that does
// not parse that way is kept whole in one element's field name.
func fieldPathElements(path string) []*validate.FieldPathElement {
	parts := strings.Split(path, ".")
	out := make([]*validate.FieldPathElement, 0, len(parts))
	for _, part := range parts {
		m := pathSegment.FindStringSubmatch(part)
		if m == nil {
			return []*validate.FieldPathElement{{FieldName: proto.String(path)}}
		}
		el := &validate.FieldPathElement{FieldName: proto.String(m[1])}
		if m[2] != "" {
			i, err := strconv.ParseUint(m[2], 10, 64)
			if err != nil {
				return []*validate.FieldPathElement{{FieldName: proto.String(path)}}
			}
			el.Subscript = &validate.FieldPathElement_Index{Index: i}
		}
		out = append(out, el)
	}
	return out
}
