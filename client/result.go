package client

import (
	"encoding/json"
	"errors"
	"fmt"

	"google.golang.org/protobuf/encoding/protojson"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

// ErrNoResult is answered by Result for a run that has no result: it is not
// COMPLETED, its definition names no result_action_id, or that action did
// not succeed (it was skipped).
var ErrNoResult = errors.New("the run has no result")

// Result decodes a run's result — the output of the action its definition
// names in result_action_id, once the run is COMPLETED — into a T, as
// encoding/json would decode the output's JSON:
//
//	run, err := c.AwaitRun(ctx, runID)
//	receipt, err := client.Result[Receipt](run)
func Result[T any](run *weftv1.Run) (T, error) {
	var out T
	if run.GetResult() == nil {
		return out, ErrNoResult
	}
	raw, err := protojson.Marshal(run.GetResult())
	if err != nil {
		return out, fmt.Errorf("run %s: result: %w", run.GetRunId(), err)
	}
	if err := json.Unmarshal(raw, &out); err != nil {
		return out, fmt.Errorf("run %s: result does not decode into %T: %w", run.GetRunId(), out, err)
	}
	return out, nil
}
