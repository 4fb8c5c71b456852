package protorules

import (
	"math/rand/v2"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// randomString draws a string of hex digits, other ASCII and multi-byte
// characters, of a length around the bounds tested.
func randomString(r *rand.Rand) string {
	const alphabet = "0123456789abcdefABCDEFxyz-"
	var b strings.Builder
	for range r.IntN(70) {
		switch r.IntN(8) {
		case 0:
			b.WriteString("é")
		case 1:
			b.WriteString("😀")
		default:
			b.WriteByte(alphabet[r.IntN(len(alphabet))])
		}
	}
	return b.String()
}

// The hex patterns matched without the regexp engine match exactly what
// the regexp matches.
func TestMatches_AHexPatternMatchesWhatItsRegexpMatches(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 16))
	for _, pattern := range []string{"^[0-9a-f]{64}$", "^([0-9a-f]{64})?$", "^[0-9a-f]{4}$", "^([0-9a-f]{2})?$"} {
		c := &valueCheck{}
		require.NoError(t, c.set("pattern", valueOf(pattern)))
		require.NotZero(t, c.hexLen, pattern)
		re := regexp.MustCompile(pattern)
		for range 20000 {
			s := randomString(r)
			if r.IntN(4) == 0 {
				s = strings.Repeat("a", c.hexLen)[:r.IntN(c.hexLen+1)] + s[:min(len(s), r.IntN(2))]
			}
			require.Equal(t, re.MatchString(s), c.matches(s), "%s %q", pattern, s)
		}
	}
}

// min_len and max_len count characters, whichever way the byte length
// settles them.
func TestStringPasses_LengthBoundsCountCharacters(t *testing.T) {
	r := rand.New(rand.NewPCG(2, 16))
	for range 20000 {
		lo, hi := uint64(r.IntN(20)), uint64(r.IntN(80))
		c := &valueCheck{}
		if r.IntN(3) > 0 {
			c.minLen = &lo
		}
		if r.IntN(3) > 0 {
			c.maxLen = &hi
		}
		s := randomString(r)
		n := uint64(utf8.RuneCountInString(s))
		want := (c.minLen == nil || n >= *c.minLen) && (c.maxLen == nil || n <= *c.maxLen)
		require.Equal(t, want, c.stringPasses(s), "min %v max %v %q", c.minLen, c.maxLen, s)
	}
}

func valueOf(s string) protoreflect.Value { return protoreflect.ValueOfString(s) }

// The rules of a generated message are read on its Go struct, the messages
// it holds included; a message with a required oneof is read through
// protoreflect.
func TestCompile_BindsGeneratedMessagesToTheirStructs(t *testing.T) {
	for _, m := range []proto.Message{&weftv1.CompleteTaskRequest{}, &weftv1.PollTasksRequest{}, &weftv1.SubmitRunRequest{}} {
		c, err := Compile(m.ProtoReflect().Descriptor())
		require.NoError(t, err)
		require.Equal(t, reflect.TypeOf(m), c.goType, "%T", m)
		for _, f := range c.fields {
			if f.nested != nil {
				require.NotNil(t, f.nested.goType, "%s", f.fd.FullName())
			}
		}
	}
	c, err := Compile((&weftv1.Event{}).ProtoReflect().Descriptor())
	require.NoError(t, err)
	require.Nil(t, c.goType)
}

// A pattern's match cache answers what its regexp answers, whether the
// value is cached or not, and holds at most maxMatched values.
func TestMatchCache_AnswersWhatTheRegexpAnswersAndStaysBounded(t *testing.T) {
	re := regexp.MustCompile(`^([A-Za-z0-9][A-Za-z0-9_.-]*)?$`)
	c := &matchCache{}
	r := rand.New(rand.NewPCG(3, 16))
	for range 5000 {
		var b strings.Builder
		for range r.IntN(7) {
			b.WriteByte("ab-"[r.IntN(3)])
		}
		s := b.String()
		require.Equal(t, re.MatchString(s), c.match(re, s), "%q", s)
		require.Equal(t, re.MatchString(s), c.match(re, s), "%q again", s)
	}
	require.Equal(t, maxMatched, len(*c.values.Load()))
}

// string.in passes exactly the values it lists (the empty string only when
// listed), whatever else the string's rules say.
func TestStringPasses_InPassesExactlyTheListedValues(t *testing.T) {
	c := &valueCheck{kind: protoreflect.StringKind}
	list := protoreflect.ValueOfList(&stringList{"", "plan", "tenant"})
	require.NoError(t, c.set("in", list))
	for s, want := range map[string]bool{"": true, "plan": true, "tenant": true, "Plan": false, "plan ": false, "x": false} {
		require.Equal(t, want, c.stringPasses(s), "%q", s)
	}
}

// stringList is a protoreflect.List of strings, as a rule's repeated value.
type stringList []string

func (l *stringList) Len() int                          { return len(*l) }
func (l *stringList) Get(i int) protoreflect.Value      { return protoreflect.ValueOfString((*l)[i]) }
func (l *stringList) Set(i int, v protoreflect.Value)   { (*l)[i] = v.String() }
func (l *stringList) Append(v protoreflect.Value)       { *l = append(*l, v.String()) }
func (l *stringList) AppendMutable() protoreflect.Value { panic("strings are not mutable") }
func (l *stringList) Truncate(n int)                    { *l = (*l)[:n] }
func (l *stringList) NewElement() protoreflect.Value    { return protoreflect.ValueOfString("") }
func (l *stringList) IsValid() bool                     { return true }

// A message that holds itself — a sub-workflow step's inline definition is a
// WorkflowDefinition inside a WorkflowDefinition — is checked by its own
// rules at every depth: a nested definition without actions does not pass.
func TestCompile_ChecksAMessageThatHoldsItselfAtEveryDepth(t *testing.T) {
	c, err := Compile((&weftv1.SubmitRunRequest{}).ProtoReflect().Descriptor())
	require.NoError(t, err)
	inner := &weftv1.WorkflowDefinition{PlanId: "child", PlanVersion: "1"}
	req := &weftv1.SubmitRunRequest{Definition: &weftv1.WorkflowDefinition{PlanId: "p", PlanVersion: "1", Actions: []*weftv1.Action{
		{Id: "a", Order: 1, Workflow: &weftv1.SubWorkflow{Definition: inner}}}}}
	require.False(t, c.PassesMessage(req), "the inline definition has no actions")
	inner.Actions = []*weftv1.Action{{Id: "x", Order: 1, Activity: "act"}}
	require.True(t, c.PassesMessage(req))
}
