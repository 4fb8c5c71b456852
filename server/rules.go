package server

import (
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/weft-dev/weft/internal/protorules"
)

// requestRules are the request messages' protovalidate rules compiled once
// per message type into direct checks (internal/protorules), so that a
// valid request costs a walk over its ruled fields instead of
// protovalidate's general evaluator. They answer only whether a request
// passes: a request they do not pass goes to protovalidate, whose error
// (each field and rule) is the one the caller gets. So the error is
// protovalidate's by construction, and what must hold is that passes agrees
// with protovalidate on which requests are valid; a property test and a
// fuzz target hold the two together. A message whose rules include one the
// compilation does not know is not compiled, and every request of that type
// goes to protovalidate.
type requestRules struct {
	byType map[protoreflect.FullName]*protorules.Message
}

// requestRulesOnce are the rules of the services weftd serves, compiled on
// first use.
var requestRulesOnce = sync.OnceValue(func() *requestRules { return compileRequestRules(ServiceNames) })

// compileRequestRules compiles the rules of every request message of the
// named services; a message that does not compile is left out.
func compileRequestRules(services []string) *requestRules {
	out := &requestRules{byType: map[protoreflect.FullName]*protorules.Message{}}
	for _, name := range services {
		sd, ok := serviceDescriptor(name)
		if !ok {
			continue
		}
		for i := range sd.Methods().Len() {
			md := sd.Methods().Get(i).Input()
			if c, err := protorules.Compile(md); err == nil {
				out.byType[md.FullName()] = c
			}
		}
	}
	return out
}

// passes reports whether m passes its rules for certain. False means that
// protovalidate must decide: m breaks a rule, or its type was not compiled.
func (r *requestRules) passes(m proto.Message) bool {
	c, ok := r.byType[m.ProtoReflect().Descriptor().FullName()]
	return ok && c.PassesMessage(m)
}
