package runcodec

import (
	"bytes"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weft-dev/weft/engine/runstate"
)

// appendState appends the fields of a State.
func appendState(b []byte, v *runstate.State) []byte {
	b = appendInt(b, 1, int64(v.FormatVersion))
	b = appendString(b, 2, string(v.RunID))
	b = appendString(b, 3, string(v.Status))
	b = appendString(b, 4, string(v.Substatus))
	b = appendString(b, 5, string(v.Message))
	for _, m := range v.Steps {
		b = appendMessage(b, 6, func(b []byte) []byte { return appendStepState(b, m) })
	}
	b = appendUint(b, 7, v.LastSeq)
	b = appendUint(b, 8, v.Epoch)
	b = appendTime(b, 9, v.CreatedAt)
	b = appendTime(b, 10, v.StartedAt)
	b = appendTime(b, 11, v.CompletedAt)
	b = appendTime(b, 12, v.Deadline)
	for _, s := range v.CompletionOrder {
		b = appendElem(b, 13, s)
	}
	b = appendString(b, 14, string(v.Failing))
	b = appendString(b, 15, string(v.HeldOn))
	if v.Compensation != nil {
		b = appendMessage(b, 16, func(b []byte) []byte { return appendCompensationState(b, v.Compensation) })
	}
	if v.Error != nil {
		b = appendMessage(b, 17, func(b []byte) []byte { return appendRunError(b, v.Error) })
	}
	if v.Cancellation != nil {
		b = appendMessage(b, 18, func(b []byte) []byte { return appendCancellation(b, v.Cancellation) })
	}
	b = appendInt(b, 19, int64(v.Pauses))
	b = appendInt(b, 20, int64(v.Resumes))
	b = appendInt(b, 21, int64(v.Blocks))
	b = appendInt(b, 22, int64(v.SignalCount))
	for _, s := range v.Slots {
		b = appendElem(b, 23, s)
	}
	b = appendTime(b, 24, v.QueuedAt)
	b = appendTime(b, 25, v.DelayUntil)
	b = appendString(b, 26, string(v.PausedFrom))
	for i := range v.Signals {
		b = appendMessage(b, 27, func(b []byte) []byte { return appendPendingSignal(b, &v.Signals[i]) })
	}
	b = appendTime(b, 28, v.RetainUntil)
	b = appendBool(b, 29, v.Removing)
	b = appendBool(b, 30, v.KeysTracked)
	for i := range v.RunKeys {
		b = appendMessage(b, 31, func(b []byte) []byte { return appendKeySpan(b, &v.RunKeys[i]) })
	}
	b = appendInt(b, 32, int64(v.StepFailures))
	return b
}

// decodeState decodes the fields of a State onto v.
func decodeState(b []byte, v *runstate.State) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			x, err := f.int()
			v.FormatVersion = int(x)
			return err
		case 2:
			s, err := f.str()
			v.RunID = s
			return err
		case 3:
			s, err := f.str()
			v.Status = runstate.RunStatus(s)
			return err
		case 4:
			s, err := f.str()
			v.Substatus = s
			return err
		case 5:
			s, err := f.str()
			v.Message = s
			return err
		case 6:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			m := &runstate.StepState{}
			v.Steps = append(v.Steps, m)
			return decodeStepState(x, m)
		case 7:
			x, err := f.uint()
			v.LastSeq = x
			return err
		case 8:
			x, err := f.uint()
			v.Epoch = x
			return err
		case 9:
			t, err := f.time()
			v.CreatedAt = t
			return err
		case 10:
			t, err := f.time()
			v.StartedAt = t
			return err
		case 11:
			t, err := f.time()
			v.CompletedAt = t
			return err
		case 12:
			t, err := f.time()
			v.Deadline = t
			return err
		case 13:
			s, err := f.str()
			v.CompletionOrder = append(v.CompletionOrder, s)
			return err
		case 14:
			s, err := f.str()
			v.Failing = s
			return err
		case 15:
			s, err := f.str()
			v.HeldOn = s
			return err
		case 16:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Compensation = &runstate.CompensationState{}
			return decodeCompensationState(x, v.Compensation)
		case 17:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Error = &runstate.RunError{}
			return decodeRunError(x, v.Error)
		case 18:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Cancellation = &runstate.Cancellation{}
			return decodeCancellation(x, v.Cancellation)
		case 19:
			x, err := f.int()
			v.Pauses = int(x)
			return err
		case 20:
			x, err := f.int()
			v.Resumes = int(x)
			return err
		case 21:
			x, err := f.int()
			v.Blocks = int(x)
			return err
		case 22:
			x, err := f.int()
			v.SignalCount = int(x)
			return err
		case 23:
			s, err := f.str()
			v.Slots = append(v.Slots, s)
			return err
		case 24:
			t, err := f.time()
			v.QueuedAt = t
			return err
		case 25:
			t, err := f.time()
			v.DelayUntil = t
			return err
		case 26:
			s, err := f.str()
			v.PausedFrom = runstate.RunStatus(s)
			return err
		case 27:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Signals = append(v.Signals, runstate.PendingSignal{})
			return decodePendingSignal(x, &v.Signals[len(v.Signals)-1])
		case 28:
			t, err := f.time()
			v.RetainUntil = t
			return err
		case 29:
			x, err := f.bool()
			v.Removing = x
			return err
		case 30:
			x, err := f.bool()
			v.KeysTracked = x
			return err
		case 31:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.RunKeys = append(v.RunKeys, runstate.KeySpan{})
			return decodeKeySpan(x, &v.RunKeys[len(v.RunKeys)-1])
		case 32:
			x, err := f.int()
			v.StepFailures = int(x)
			return err
		}
		return nil // a field this reader does not know
	})
}

// appendPendingSignal appends the fields of a PendingSignal.
func appendPendingSignal(b []byte, v *runstate.PendingSignal) []byte {
	b = appendString(b, 1, string(v.Name))
	b = appendString(b, 2, string(v.ID))
	b = appendString(b, 3, string(v.StorageKey))
	return b
}

// decodePendingSignal decodes the fields of a PendingSignal onto v.
func decodePendingSignal(b []byte, v *runstate.PendingSignal) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			s, err := f.str()
			v.Name = s
			return err
		case 2:
			s, err := f.str()
			v.ID = s
			return err
		case 3:
			s, err := f.str()
			v.StorageKey = s
			return err
		}
		return nil // a field this reader does not know
	})
}

// appendStepState appends the fields of a StepState.
func appendStepState(b []byte, v *runstate.StepState) []byte {
	b = appendString(b, 1, string(v.ActionID))
	b = appendString(b, 2, string(v.Status))
	b = appendInt(b, 3, int64(v.LogicalAttempt))
	b = appendInt(b, 4, int64(v.EngineAttempt))
	for i := range v.Attempts {
		b = appendMessage(b, 5, func(b []byte) []byte { return appendAttempt(b, &v.Attempts[i]) })
	}
	b = appendString(b, 6, string(v.TaskID))
	b = appendString(b, 7, string(v.ReadyKey))
	b = appendTime(b, 8, v.ScheduledAt)
	b = appendTime(b, 9, v.StartedAt)
	b = appendTime(b, 10, v.CompletedAt)
	b = appendBytes(b, 11, v.Output)
	for i := range v.Artifacts {
		b = appendMessage(b, 12, func(b []byte) []byte { return appendArtifactRef(b, &v.Artifacts[i]) })
	}
	if v.Error != nil {
		b = appendMessage(b, 13, func(b []byte) []byte { return appendStepError(b, v.Error) })
	}
	b = appendString(b, 14, string(v.CompletionToken))
	b = appendString(b, 15, string(v.WaitingSignal))
	b = appendTime(b, 16, v.NextAttemptAt)
	b = appendString(b, 17, string(v.Reason))
	if v.Manual != nil {
		b = appendMessage(b, 18, func(b []byte) []byte { return appendManualResult(b, v.Manual) })
	}
	b = appendString(b, 19, string(v.CompStatus))
	b = appendInt(b, 20, int64(v.CompAttempt))
	if v.CompError != nil {
		b = appendMessage(b, 21, func(b []byte) []byte { return appendStepError(b, v.CompError) })
	}
	b = appendString(b, 22, string(v.CompTaskID))
	b = appendString(b, 23, string(v.CompReadyKey))
	b = appendBool(b, 24, v.Reconcile)
	b = appendBool(b, 25, v.Verifying)
	for i := range v.Keys {
		b = appendMessage(b, 26, func(b []byte) []byte { return appendKeySpan(b, &v.Keys[i]) })
	}
	return b
}

// decodeStepState decodes the fields of a StepState onto v.
func decodeStepState(b []byte, v *runstate.StepState) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			s, err := f.str()
			v.ActionID = s
			return err
		case 2:
			s, err := f.str()
			v.Status = runstate.StepStatus(s)
			return err
		case 3:
			x, err := f.int()
			v.LogicalAttempt = int(x)
			return err
		case 4:
			x, err := f.int()
			v.EngineAttempt = int(x)
			return err
		case 5:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Attempts = append(v.Attempts, runstate.Attempt{})
			return decodeAttempt(x, &v.Attempts[len(v.Attempts)-1])
		case 6:
			s, err := f.str()
			v.TaskID = s
			return err
		case 7:
			s, err := f.str()
			v.ReadyKey = s
			return err
		case 8:
			t, err := f.time()
			v.ScheduledAt = t
			return err
		case 9:
			t, err := f.time()
			v.StartedAt = t
			return err
		case 10:
			t, err := f.time()
			v.CompletedAt = t
			return err
		case 11:
			x, err := f.bytes()
			if len(x) > 0 { // empty is absent
				v.Output = bytes.Clone(x)
			}
			return err
		case 12:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Artifacts = append(v.Artifacts, runstate.ArtifactRef{})
			return decodeArtifactRef(x, &v.Artifacts[len(v.Artifacts)-1])
		case 13:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Error = &runstate.StepError{}
			return decodeStepError(x, v.Error)
		case 14:
			s, err := f.str()
			v.CompletionToken = s
			return err
		case 15:
			s, err := f.str()
			v.WaitingSignal = s
			return err
		case 16:
			t, err := f.time()
			v.NextAttemptAt = t
			return err
		case 17:
			s, err := f.str()
			v.Reason = s
			return err
		case 18:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Manual = &runstate.ManualResult{}
			return decodeManualResult(x, v.Manual)
		case 19:
			s, err := f.str()
			v.CompStatus = runstate.CompensationStatus(s)
			return err
		case 20:
			x, err := f.int()
			v.CompAttempt = int(x)
			return err
		case 21:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.CompError = &runstate.StepError{}
			return decodeStepError(x, v.CompError)
		case 22:
			s, err := f.str()
			v.CompTaskID = s
			return err
		case 23:
			s, err := f.str()
			v.CompReadyKey = s
			return err
		case 24:
			x, err := f.bool()
			v.Reconcile = x
			return err
		case 25:
			x, err := f.bool()
			v.Verifying = x
			return err
		case 26:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Keys = append(v.Keys, runstate.KeySpan{})
			return decodeKeySpan(x, &v.Keys[len(v.Keys)-1])
		}
		return nil // a field this reader does not know
	})
}

// appendCompensationState appends the fields of a CompensationState.
func appendCompensationState(b []byte, v *runstate.CompensationState) []byte {
	for _, s := range v.Order {
		b = appendElem(b, 1, s)
	}
	b = appendInt(b, 2, int64(v.Next))
	b = appendString(b, 3, string(v.Outcome))
	b = appendBool(b, 4, v.ForCancel)
	return b
}

// decodeCompensationState decodes the fields of a CompensationState onto v.
func decodeCompensationState(b []byte, v *runstate.CompensationState) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			s, err := f.str()
			v.Order = append(v.Order, s)
			return err
		case 2:
			x, err := f.int()
			v.Next = int(x)
			return err
		case 3:
			s, err := f.str()
			v.Outcome = runstate.CompensationOutcome(s)
			return err
		case 4:
			x, err := f.bool()
			v.ForCancel = x
			return err
		}
		return nil // a field this reader does not know
	})
}

// appendManualResult appends the fields of a ManualResult.
func appendManualResult(b []byte, v *runstate.ManualResult) []byte {
	b = appendString(b, 1, string(v.RunID))
	b = appendString(b, 2, string(v.ActionID))
	b = appendString(b, 3, string(v.CompletionToken))
	b = appendString(b, 4, string(v.Outcome))
	b = appendString(b, 5, string(v.ActorUserID))
	b = appendTime(b, 6, v.AcceptedAt)
	b = appendString(b, 7, string(v.Principal))
	b = appendString(b, 8, string(v.Notes))
	for _, s := range v.EvidenceRefs {
		b = appendElem(b, 9, s)
	}
	return b
}

// decodeManualResult decodes the fields of a ManualResult onto v.
func decodeManualResult(b []byte, v *runstate.ManualResult) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			s, err := f.str()
			v.RunID = s
			return err
		case 2:
			s, err := f.str()
			v.ActionID = s
			return err
		case 3:
			s, err := f.str()
			v.CompletionToken = s
			return err
		case 4:
			s, err := f.str()
			v.Outcome = runstate.ManualOutcome(s)
			return err
		case 5:
			s, err := f.str()
			v.ActorUserID = s
			return err
		case 6:
			t, err := f.time()
			v.AcceptedAt = t
			return err
		case 7:
			s, err := f.str()
			v.Principal = s
			return err
		case 8:
			s, err := f.str()
			v.Notes = s
			return err
		case 9:
			s, err := f.str()
			v.EvidenceRefs = append(v.EvidenceRefs, s)
			return err
		}
		return nil // a field this reader does not know
	})
}

// appendKeySpan appends the fields of a KeySpan.
func appendKeySpan(b []byte, v *runstate.KeySpan) []byte {
	b = appendUint(b, 1, v.Types)
	b = appendInt(b, 2, int64(v.Logical))
	b = appendInt(b, 3, int64(v.From))
	b = appendInt(b, 4, int64(v.To)-int64(v.From)) // the span's length less one: nothing for one number
	return b
}

// decodeKeySpan decodes the fields of a KeySpan onto v; its field 4 is
// To - From, so that a span of one number (the most) writes none.
func decodeKeySpan(b []byte, v *runstate.KeySpan) error {
	v.To = 0
	err := eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			x, err := f.uint()
			v.Types = x
			return err
		case 2:
			x, err := f.int()
			v.Logical = int(x)
			return err
		case 3:
			x, err := f.int()
			v.From = int(x)
			return err
		case 4:
			x, err := f.int()
			v.To = int(x) // From + this, once every field is read
			return err
		}
		return nil // a field this reader does not know
	})
	v.To += v.From
	return err
}
