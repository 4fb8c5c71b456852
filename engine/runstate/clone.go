package runstate

import "slices"

// Clone answers a deep copy of s: nothing reachable from the copy is shared
// with s. TestStateClone_SharesNothing fails when a field is added here
// without being copied.
func (s *State) Clone() *State {
	c := *s
	c.Steps = make([]*StepState, len(s.Steps))
	steps := make([]StepState, len(s.Steps)) // the copies, in one allocation
	for i, st := range s.Steps {
		st.cloneInto(&steps[i])
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
	return &c
}

// Clone answers a deep copy of st.
func (st *StepState) Clone() *StepState {
	var c StepState
	st.cloneInto(&c)
	return &c
}

// cloneInto makes c a deep copy of st.
func (st *StepState) cloneInto(c *StepState) {
	*c = *st
	c.Attempts = slices.Clone(st.Attempts)
	for i := range c.Attempts {
		c.Attempts[i].Error = c.Attempts[i].Error.Clone()
	}
	c.Output = slices.Clone(st.Output)
	c.Keys = slices.Clone(st.Keys)
	c.Artifacts = slices.Clone(st.Artifacts)
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
