package runstate

import "slices"

// Clone answers a deep copy of s: nothing reachable from the copy is shared
// with s. TestStateClone_SharesNothing fails when a field is added here
// without being copied. The steps' copies, and their attempts, outputs and
// key spans, are each made in one allocation for all steps (cloneRoom).
func (s *State) Clone() *State {
	c := *s
	c.Steps = make([]*StepState, len(s.Steps))
	steps := make([]StepState, len(s.Steps)) // the copies, in one allocation
	room := roomFor(s.Steps)
	for i, st := range s.Steps {
		st.cloneInto(&steps[i], &room)
		c.Steps[i] = &steps[i]
	}
	c.CompletionOrder = slices.Clone(s.CompletionOrder)
	if s.Compensation != nil {
		comp := *s.Compensation
		comp.Order = slices.Clone(comp.Order)
		c.Compensation = &comp
	}
	if s.Error != nil {
		re := *s.Error
		re.Error = re.Error.Clone()
		c.Error = &re
	}
	if s.Cancellation != nil {
		cn := *s.Cancellation
		c.Cancellation = &cn
	}
	c.Slots = slices.Clone(s.Slots)
	c.Signals = slices.Clone(s.Signals)
	c.RunKeys = slices.Clone(s.RunKeys)
	c.Deadlines = slices.Clone(s.Deadlines)
	if s.SearchAttributes != nil {
		c.SearchAttributes = make([]SearchAttribute, len(s.SearchAttributes))
		for i, a := range s.SearchAttributes {
			a.Value = slices.Clone(a.Value)
			c.SearchAttributes[i] = a
		}
	}
	return &c
}

// Clone answers a deep copy of st.
func (st *StepState) Clone() *StepState {
	var c StepState
	room := roomFor([]*StepState{st})
	st.cloneInto(&c, &room)
	return &c
}

// cloneRoom is the room a clone copies its steps' attempts, outputs and key
// spans into: one allocation of each for all steps, handed out in pieces
// whose capacity is their length, so that an append to one step's never
// writes over another's.
type cloneRoom struct {
	attempts []Attempt
	keys     []KeySpan
	output   []byte
}

// roomFor answers the room the clones of steps take.
func roomFor(steps []*StepState) cloneRoom {
	var attempts, keys, output int
	for _, st := range steps {
		attempts, keys, output = attempts+len(st.Attempts), keys+len(st.Keys), output+len(st.Output)
	}
	return cloneRoom{attempts: make([]Attempt, attempts), keys: make([]KeySpan, keys), output: make([]byte, output)}
}

// copyInto answers a copy of src taken from the front of *room, nil for
// nil and empty for empty, as slices.Clone does.
func copyInto[T any](room *[]T, src []T) []T {
	switch {
	case src == nil:
		return nil
	case len(src) == 0:
		return make([]T, 0) // no allocation: the zero-size base
	}
	n := len(src)
	out := (*room)[:n:n]
	*room = (*room)[n:]
	copy(out, src)
	return out
}

// cloneInto makes c a deep copy of st, its attempts, output and key spans
// taken from room.
func (st *StepState) cloneInto(c *StepState, room *cloneRoom) {
	*c = *st
	c.Attempts = copyInto(&room.attempts, st.Attempts)
	for i := range c.Attempts {
		c.Attempts[i].Error = c.Attempts[i].Error.Clone()
	}
	c.Output = copyInto(&room.output, st.Output)
	c.Keys = copyInto(&room.keys, st.Keys)
	c.Artifacts = slices.Clone(st.Artifacts)
	c.HeartbeatDetails = slices.Clone(st.HeartbeatDetails)
	c.Input = slices.Clone(st.Input)
	c.Item = slices.Clone(st.Item)
	c.CompInput = slices.Clone(st.CompInput)
	c.EagerTokens = slices.Clone(st.EagerTokens)
	c.Error = st.Error.Clone()
	c.CompError = st.CompError.Clone()
	if st.Manual != nil {
		m := *st.Manual
		m.EvidenceRefs = slices.Clone(m.EvidenceRefs)
		c.Manual = &m
	}
}

// Clone answers a copy of e, or nil for nil.
func (e *StepError) Clone() *StepError {
	if e == nil {
		return nil
	}
	c := *e
	return &c
}
