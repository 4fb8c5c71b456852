package runcodec

import (
	"bytes"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/weft-dev/weft/engine/definition"
	"github.com/weft-dev/weft/engine/runstate"
)

// appendEvent appends the fields of a Event.
func appendEvent(b []byte, v *runstate.Event) []byte {
	b = appendString(b, 1, string(v.Type))
	if id, ok := uuidBytes(v.ID); ok {
		b = appendBytes(b, 14, id[:])
	} else {
		b = appendString(b, 2, v.ID)
	}
	b = appendString(b, 3, string(v.RunID))
	b = appendUint(b, 4, v.Seq)
	if key, ok := sha256Bytes(v.IdempotencyKey); ok {
		b = appendBytes(b, 15, key[:])
	} else {
		b = appendString(b, 5, v.IdempotencyKey)
	}
	b = appendTime(b, 6, v.EmittedAt)
	b = appendTime(b, 7, v.OccurredAt)
	b = appendString(b, 8, string(v.EmittedBy))
	b = appendString(b, 9, string(v.StepID))
	b = appendInt(b, 10, int64(v.LogicalAttempt))
	b = appendInt(b, 11, int64(v.EngineAttempt))
	b = appendString(b, 12, string(v.PlanVersion))
	b = appendMessage(b, 13, func(b []byte) []byte { return appendEventData(b, &v.Data) })
	return b
}

// decodeEvent decodes the fields of a Event onto v.
func decodeEvent(b []byte, v *runstate.Event) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			s, err := f.str()
			v.Type = s
			return err
		case 2:
			s, err := f.str()
			v.ID = s
			return err
		case 3:
			s, err := f.str()
			v.RunID = s
			return err
		case 4:
			x, err := f.uint()
			v.Seq = x
			return err
		case 5:
			s, err := f.str()
			v.IdempotencyKey = s
			return err
		case 6:
			t, err := f.time()
			v.EmittedAt = t
			return err
		case 7:
			t, err := f.time()
			v.OccurredAt = t
			return err
		case 8:
			s, err := f.str()
			v.EmittedBy = s
			return err
		case 9:
			s, err := f.str()
			v.StepID = s
			return err
		case 10:
			x, err := f.int()
			v.LogicalAttempt = int(x)
			return err
		case 11:
			x, err := f.int()
			v.EngineAttempt = int(x)
			return err
		case 12:
			s, err := f.str()
			v.PlanVersion = s
			return err
		case 13:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			return decodeEventData(x, &v.Data)
		case 14:
			x, err := f.bytes()
			if err == nil {
				v.ID, err = uuidString(x)
			}
			return err
		case 15:
			x, err := f.bytes()
			if err == nil {
				v.IdempotencyKey, err = sha256String(x)
			}
			return err
		}
		return nil // a field this reader does not know
	})
}

// appendEventData appends the fields of a EventData.
func appendEventData(b []byte, v *runstate.EventData) []byte {
	b = appendString(b, 1, string(v.Status))
	b = appendString(b, 2, string(v.Substatus))
	b = appendString(b, 3, string(v.Reason))
	b = appendString(b, 4, string(v.Actor))
	b = appendString(b, 5, string(v.WorkerID))
	b = appendString(b, 6, string(v.TaskID))
	b = appendString(b, 7, string(v.Queue))
	b = appendTime(b, 8, v.NotBefore)
	b = appendTime(b, 9, v.StartedAt)
	b = appendTime(b, 10, v.CompletedAt)
	b = appendTime(b, 11, v.Deadline)
	b = appendBytes(b, 12, v.Output)
	for i := range v.Artifacts {
		b = appendMessage(b, 13, func(b []byte) []byte { return appendArtifactRef(b, &v.Artifacts[i]) })
	}
	if v.Error != nil {
		b = appendMessage(b, 14, func(b []byte) []byte { return appendStepError(b, v.Error) })
	}
	if v.RunError != nil {
		b = appendMessage(b, 15, func(b []byte) []byte { return appendRunError(b, v.RunError) })
	}
	if v.Attempt != nil {
		b = appendMessage(b, 16, func(b []byte) []byte { return appendAttempt(b, v.Attempt) })
	}
	b = appendBool(b, 17, v.WillRetry)
	b = appendTime(b, 18, v.NextAttemptAt)
	b = appendString(b, 19, string(v.CompletionToken))
	b = appendString(b, 20, string(v.SignalKind))
	b = appendString(b, 21, string(v.SignalName))
	b = appendString(b, 22, string(v.SignalID))
	b = appendString(b, 23, string(v.SignalStorageKey))
	b = appendTime(b, 24, v.AcceptedAt)
	b = appendString(b, 25, string(v.ManualOutcome))
	b = appendString(b, 26, string(v.Principal))
	b = appendString(b, 27, string(v.CorrelationID))
	b = appendString(b, 28, string(v.Notes))
	for _, s := range v.EvidenceRefs {
		b = appendElem(b, 29, s)
	}
	b = appendInt(b, 30, int64(v.InFlightTasks))
	b = appendBool(b, 31, v.TimedOut)
	b = appendInt(b, 32, int64(v.NewLogicalAttempt))
	b = appendString(b, 33, string(v.Operation))
	b = appendString(b, 34, string(v.OperationKey))
	b = appendString(b, 35, string(v.FailedActionID))
	for _, s := range v.CompensationOrder {
		b = appendElem(b, 36, s)
	}
	b = appendString(b, 37, string(v.CompensationOutcome))
	if v.Cancellation != nil {
		b = appendMessage(b, 38, func(b []byte) []byte { return appendCancellation(b, v.Cancellation) })
	}
	for _, s := range v.WaitingOn {
		b = appendElem(b, 39, s)
	}
	b = appendString(b, 40, string(v.Source))
	if v.Context != nil {
		b = appendMessage(b, 41, func(b []byte) []byte { return appendRunContext(b, v.Context) })
	}
	b = appendString(b, 42, string(v.PlanID))
	b = appendString(b, 43, string(v.PlanSHA256))
	b = appendString(b, 44, string(v.RunRequestID))
	b = appendString(b, 45, string(v.VerifyState))
	b = appendString(b, 46, string(v.ReconciliationKey))
	b = appendBool(b, 47, v.Compensate)
	b = appendBool(b, 48, v.CancelRequested)
	return b
}

// decodeEventData decodes the fields of a EventData onto v.
func decodeEventData(b []byte, v *runstate.EventData) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			s, err := f.str()
			v.Status = s
			return err
		case 2:
			s, err := f.str()
			v.Substatus = s
			return err
		case 3:
			s, err := f.str()
			v.Reason = s
			return err
		case 4:
			s, err := f.str()
			v.Actor = s
			return err
		case 5:
			s, err := f.str()
			v.WorkerID = s
			return err
		case 6:
			s, err := f.str()
			v.TaskID = s
			return err
		case 7:
			s, err := f.str()
			v.Queue = s
			return err
		case 8:
			t, err := f.time()
			v.NotBefore = t
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
			t, err := f.time()
			v.Deadline = t
			return err
		case 12:
			x, err := f.bytes()
			if len(x) > 0 { // empty is absent
				v.Output = bytes.Clone(x)
			}
			return err
		case 13:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Artifacts = append(v.Artifacts, runstate.ArtifactRef{})
			return decodeArtifactRef(x, &v.Artifacts[len(v.Artifacts)-1])
		case 14:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Error = &runstate.StepError{}
			return decodeStepError(x, v.Error)
		case 15:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.RunError = &runstate.RunError{}
			return decodeRunError(x, v.RunError)
		case 16:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Attempt = &runstate.Attempt{}
			return decodeAttempt(x, v.Attempt)
		case 17:
			x, err := f.bool()
			v.WillRetry = x
			return err
		case 18:
			t, err := f.time()
			v.NextAttemptAt = t
			return err
		case 19:
			s, err := f.str()
			v.CompletionToken = s
			return err
		case 20:
			s, err := f.str()
			v.SignalKind = runstate.SignalKind(s)
			return err
		case 21:
			s, err := f.str()
			v.SignalName = s
			return err
		case 22:
			s, err := f.str()
			v.SignalID = s
			return err
		case 23:
			s, err := f.str()
			v.SignalStorageKey = s
			return err
		case 24:
			t, err := f.time()
			v.AcceptedAt = t
			return err
		case 25:
			s, err := f.str()
			v.ManualOutcome = s
			return err
		case 26:
			s, err := f.str()
			v.Principal = s
			return err
		case 27:
			s, err := f.str()
			v.CorrelationID = s
			return err
		case 28:
			s, err := f.str()
			v.Notes = s
			return err
		case 29:
			s, err := f.str()
			v.EvidenceRefs = append(v.EvidenceRefs, s)
			return err
		case 30:
			x, err := f.int()
			v.InFlightTasks = int(x)
			return err
		case 31:
			x, err := f.bool()
			v.TimedOut = x
			return err
		case 32:
			x, err := f.int()
			v.NewLogicalAttempt = int(x)
			return err
		case 33:
			s, err := f.str()
			v.Operation = s
			return err
		case 34:
			s, err := f.str()
			v.OperationKey = s
			return err
		case 35:
			s, err := f.str()
			v.FailedActionID = s
			return err
		case 36:
			s, err := f.str()
			v.CompensationOrder = append(v.CompensationOrder, s)
			return err
		case 37:
			s, err := f.str()
			v.CompensationOutcome = runstate.CompensationOutcome(s)
			return err
		case 38:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Cancellation = &runstate.Cancellation{}
			return decodeCancellation(x, v.Cancellation)
		case 39:
			s, err := f.str()
			v.WaitingOn = append(v.WaitingOn, s)
			return err
		case 40:
			s, err := f.str()
			v.Source = s
			return err
		case 41:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Context = &runstate.RunContext{}
			return decodeRunContext(x, v.Context)
		case 42:
			s, err := f.str()
			v.PlanID = s
			return err
		case 43:
			s, err := f.str()
			v.PlanSHA256 = s
			return err
		case 44:
			s, err := f.str()
			v.RunRequestID = s
			return err
		case 45:
			s, err := f.str()
			v.VerifyState = s
			return err
		case 46:
			s, err := f.str()
			v.ReconciliationKey = s
			return err
		case 47:
			x, err := f.bool()
			v.Compensate = x
			return err
		case 48:
			x, err := f.bool()
			v.CancelRequested = x
			return err
		}
		return nil // a field this reader does not know
	})
}

// appendArtifactRef appends the fields of a ArtifactRef.
func appendArtifactRef(b []byte, v *runstate.ArtifactRef) []byte {
	b = appendString(b, 1, string(v.URI))
	b = appendString(b, 2, string(v.Kind))
	b = appendString(b, 3, string(v.SHA256))
	b = appendUint(b, 4, v.SizeBytes)
	b = appendTime(b, 5, v.ExpiresAt)
	return b
}

// decodeArtifactRef decodes the fields of a ArtifactRef onto v.
func decodeArtifactRef(b []byte, v *runstate.ArtifactRef) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			s, err := f.str()
			v.URI = s
			return err
		case 2:
			s, err := f.str()
			v.Kind = s
			return err
		case 3:
			s, err := f.str()
			v.SHA256 = s
			return err
		case 4:
			x, err := f.uint()
			v.SizeBytes = x
			return err
		case 5:
			t, err := f.time()
			v.ExpiresAt = t
			return err
		}
		return nil // a field this reader does not know
	})
}

// appendStepError appends the fields of a StepError.
func appendStepError(b []byte, v *runstate.StepError) []byte {
	b = appendString(b, 1, string(v.Class))
	b = appendString(b, 2, string(v.Code))
	b = appendString(b, 3, string(v.Message))
	b = appendBool(b, 4, v.Retryable)
	return b
}

// decodeStepError decodes the fields of a StepError onto v.
func decodeStepError(b []byte, v *runstate.StepError) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			s, err := f.str()
			v.Class = definition.ErrorClass(s)
			return err
		case 2:
			s, err := f.str()
			v.Code = s
			return err
		case 3:
			s, err := f.str()
			v.Message = s
			return err
		case 4:
			x, err := f.bool()
			v.Retryable = x
			return err
		}
		return nil // a field this reader does not know
	})
}

// appendRunError appends the fields of a RunError.
func appendRunError(b []byte, v *runstate.RunError) []byte {
	b = appendString(b, 1, string(v.ActionID))
	if v.Error != nil {
		b = appendMessage(b, 2, func(b []byte) []byte { return appendStepError(b, v.Error) })
	}
	b = appendBool(b, 3, v.WorkflowTimeout)
	return b
}

// decodeRunError decodes the fields of a RunError onto v.
func decodeRunError(b []byte, v *runstate.RunError) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			s, err := f.str()
			v.ActionID = s
			return err
		case 2:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Error = &runstate.StepError{}
			return decodeStepError(x, v.Error)
		case 3:
			x, err := f.bool()
			v.WorkflowTimeout = x
			return err
		}
		return nil // a field this reader does not know
	})
}

// appendAttempt appends the fields of a Attempt.
func appendAttempt(b []byte, v *runstate.Attempt) []byte {
	b = appendInt(b, 1, int64(v.LogicalAttempt))
	b = appendInt(b, 2, int64(v.EngineAttempt))
	b = appendString(b, 3, string(v.Outcome))
	if v.Error != nil {
		b = appendMessage(b, 4, func(b []byte) []byte { return appendStepError(b, v.Error) })
	}
	b = appendTime(b, 5, v.StartedAt)
	b = appendTime(b, 6, v.CompletedAt)
	b = appendString(b, 7, string(v.WorkerID))
	return b
}

// decodeAttempt decodes the fields of a Attempt onto v.
func decodeAttempt(b []byte, v *runstate.Attempt) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			x, err := f.int()
			v.LogicalAttempt = int(x)
			return err
		case 2:
			x, err := f.int()
			v.EngineAttempt = int(x)
			return err
		case 3:
			s, err := f.str()
			v.Outcome = runstate.AttemptOutcome(s)
			return err
		case 4:
			x, err := f.bytes()
			if err != nil {
				return err
			}
			v.Error = &runstate.StepError{}
			return decodeStepError(x, v.Error)
		case 5:
			t, err := f.time()
			v.StartedAt = t
			return err
		case 6:
			t, err := f.time()
			v.CompletedAt = t
			return err
		case 7:
			s, err := f.str()
			v.WorkerID = s
			return err
		}
		return nil // a field this reader does not know
	})
}

// appendCancellation appends the fields of a Cancellation.
func appendCancellation(b []byte, v *runstate.Cancellation) []byte {
	b = appendString(b, 1, string(v.CancelledBy))
	b = appendString(b, 2, string(v.Reason))
	b = appendTime(b, 3, v.RequestedAt)
	b = appendBool(b, 4, v.Compensate)
	return b
}

// decodeCancellation decodes the fields of a Cancellation onto v.
func decodeCancellation(b []byte, v *runstate.Cancellation) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			s, err := f.str()
			v.CancelledBy = s
			return err
		case 2:
			s, err := f.str()
			v.Reason = s
			return err
		case 3:
			t, err := f.time()
			v.RequestedAt = t
			return err
		case 4:
			x, err := f.bool()
			v.Compensate = x
			return err
		}
		return nil // a field this reader does not know
	})
}

// appendRunContext appends the fields of a RunContext.
func appendRunContext(b []byte, v *runstate.RunContext) []byte {
	b = appendString(b, 1, string(v.TenantID))
	b = appendString(b, 2, string(v.ProjectID))
	b = appendString(b, 3, string(v.EnvironmentID))
	b = appendString(b, 4, string(v.TriggeredBy))
	b = appendString(b, 5, string(v.TriggerSource))
	return b
}

// decodeRunContext decodes the fields of a RunContext onto v.
func decodeRunContext(b []byte, v *runstate.RunContext) error {
	return eachField(b, func(n protowire.Number, f field) error {
		switch n {
		case 1:
			s, err := f.str()
			v.TenantID = s
			return err
		case 2:
			s, err := f.str()
			v.ProjectID = s
			return err
		case 3:
			s, err := f.str()
			v.EnvironmentID = s
			return err
		case 4:
			s, err := f.str()
			v.TriggeredBy = s
			return err
		case 5:
			s, err := f.str()
			v.TriggerSource = s
			return err
		}
		return nil // a field this reader does not know
	})
}
