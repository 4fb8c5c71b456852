package runstate

import (
	"reflect"
	"testing"

	"github.com/weft-dev/weft/internal/testkit/fill"
)

// filled is a checkpoint with every field set, the same every time: two
// elements in every slice, every pointer allocated.
func filled() State {
	var s State
	fill.Filler{Full: true, SliceLen: 2}.Fill(&s)
	return s
}

// A decision changes a clone of the cached checkpoint; if the clone shared
// anything with the cached state, readers would see a decision that was
// never committed. Fails when a field is added to State (or anything it
// holds) without clone copying it.
func TestStateClone_SharesNothing(t *testing.T) {
	orig, want := filled(), filled()
	c := orig.Clone()
	if !reflect.DeepEqual(c, &orig) {
		t.Fatalf("clone differs from the original:\n%+v\n%+v", c, &orig)
	}
	fill.Change(c)
	if !reflect.DeepEqual(&orig, &want) {
		t.Fatal("changing the clone changed the original: clone shares a pointer or slice with it")
	}
}

// A clone's steps share one allocation of attempts, one of outputs and one
// of key spans: growing one step's must never write over the next step's.
func TestStateClone_GrowingOneStepLeavesTheNextStepsAlone(t *testing.T) {
	orig := filled()
	orig.Steps[0].Output = []byte(`{"a":1}`)
	orig.Steps[1].Output = []byte(`{"b":2}`)
	c := orig.Clone()
	next := c.Steps[1].Clone()
	c.Steps[0].Attempts = append(c.Steps[0].Attempts, Attempt{WorkerID: "grown"})
	c.Steps[0].Keys = append(c.Steps[0].Keys, KeySpan{Types: 99})
	c.Steps[0].Output = append(c.Steps[0].Output, "grown"...)
	if !reflect.DeepEqual(c.Steps[1], next) {
		t.Fatalf("growing step 0's copy changed step 1's:\n%+v\n%+v", c.Steps[1], next)
	}
}

// Clone keeps a nil slice nil and an empty one empty, as slices.Clone does.
func TestStateClone_KeepsNilAndEmptySlicesApart(t *testing.T) {
	orig := State{Steps: []*StepState{{ActionID: "a"}, {ActionID: "b", Attempts: []Attempt{}, Keys: []KeySpan{}, Output: []byte{}}}}
	c := orig.Clone()
	if c.Steps[0].Attempts != nil || c.Steps[0].Keys != nil || c.Steps[0].Output != nil {
		t.Fatal("a nil slice's copy is not nil")
	}
	if c.Steps[1].Attempts == nil || c.Steps[1].Keys == nil || c.Steps[1].Output == nil {
		t.Fatal("an empty slice's copy is nil")
	}
}
