package client

import (
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

func TestAwaitingCopy_CarriesEveryFieldOfTheRequest(t *testing.T) {
	t.Parallel()
	req := &weftv1.SubmitRunRequest{}
	m := req.ProtoReflect()
	fields := m.Descriptor().Fields()
	for i := range fields.Len() {
		fd := fields.Get(i)
		switch {
		case fd.IsMap():
			mp := m.Mutable(fd).Map()
			mp.Set(protoreflect.ValueOfString("k").MapKey(), mp.NewValue())
		case fd.Kind() == protoreflect.MessageKind:
			m.Set(fd, protoreflect.ValueOfMessage(m.NewField(fd).Message()))
		case fd.Kind() == protoreflect.StringKind:
			m.Set(fd, protoreflect.ValueOfString("x"))
		case fd.Kind() == protoreflect.BoolKind:
			m.Set(fd, protoreflect.ValueOfBool(true))
		case fd.Kind() == protoreflect.Uint32Kind:
			m.Set(fd, protoreflect.ValueOfUint32(7))
		default:
			t.Fatalf("field %s: teach this test (and awaitingCopy) its kind %s", fd.Name(), fd.Kind())
		}
	}
	cp := awaitingCopy(req).ProtoReflect()
	for i := range fields.Len() {
		fd := fields.Get(i)
		require.True(t, cp.Has(fd), "field %s is copied", fd.Name())
		require.True(t, cp.Get(fd).Equal(m.Get(fd)), "field %s is copied", fd.Name())
	}
	require.True(t, awaitingCopy(&weftv1.SubmitRunRequest{}).GetStart(), "start is set")
	require.Equal(t, uint32(awaitRunWait.Milliseconds()), awaitingCopy(&weftv1.SubmitRunRequest{}).GetAwaitMs())
}
