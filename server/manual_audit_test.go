package server

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
)

const tokenCarol = "acme-carol-token-0123456789"

// auditTeam answers a server whose tokens are two principals of one tenant,
// alice and carol, and a client for each.
func auditTeam(t *testing.T) (url string, alice, carol apitest.Clients) {
	t.Helper()
	tokens, err := NewTokenSet(TokenSpec{Token: tokenAcme, Tenant: "acme", Principal: "alice"},
		TokenSpec{Token: tokenCarol, Tenant: "acme", Principal: "carol"})
	require.NoError(t, err)
	cfg := engineConfig(t)
	cfg.Tokens = tokens
	url = testServer(t, cfg)
	return url, apitest.NewClients(url, apitest.WithBearer(apitest.Protocols[0], tokenAcme)),
		apitest.NewClients(url, apitest.WithBearer(apitest.Protocols[0], tokenCarol))
}

// waitingManual submits, as c, a run whose one step waits for a person, and
// answers the run id and the wait's token.
func waitingManual(t *testing.T, c apitest.Clients) (runID, token string) {
	t.Helper()
	res, err := c.Runs.SubmitRun(context.Background(), connect.NewRequest(&weftv1.SubmitRunRequest{Start: true,
		Definition: def(&weftv1.Action{Id: "approve", Order: 1, CompletionMode: weftv1.CompletionMode_COMPLETION_MODE_MANUAL})}))
	require.NoError(t, err)
	run := res.Msg.GetRun()
	return run.GetRunId(), run.GetSteps()[0].GetCompletionToken()
}

func manualRequest(runID, token, actor string) *weftv1.CompleteManualActionRequest {
	return &weftv1.CompleteManualActionRequest{SchemaVersion: 1, RunId: runID, ActionId: "approve", CompletionToken: token,
		Outcome: weftv1.ManualOutcome_MANUAL_OUTCOME_SUCCEEDED, ActorUserId: actor, CompletedAt: timestamppb.Now(),
		Notes: "stock checked", EvidenceRefs: []string{"ticket:OPS-7", "photo:42"}}
}

func TestManualCompletion_SeparationOfDutiesIsDecidedOnTheAuthenticatedPrincipal(t *testing.T) {
	t.Parallel()
	_, alice, carol := auditTeam(t)
	runID, token := waitingManual(t, alice)
	_, err := alice.Signals.CompleteManualAction(context.Background(), connect.NewRequest(manualRequest(runID, token, "not-alice")))
	require.Equal(t, connect.CodePermissionDenied, connect.CodeOf(err), "the submitter's token cannot complete under another name")
	res, err := carol.Signals.CompleteManualAction(context.Background(), connect.NewRequest(manualRequest(runID, token, "carol")))
	require.NoError(t, err)
	require.Equal(t, "carol", res.Msg.GetResult().GetPrincipal())
	require.Equal(t, "stock checked", res.Msg.GetResult().GetNotes())

	events, err := alice.Events.ListEvents(context.Background(), connect.NewRequest(&weftv1.ListEventsRequest{RunId: runID}))
	require.NoError(t, err)
	var rejected *weftv1.SignalRejected
	var accepted *weftv1.SignalAccepted
	for _, ev := range events.Msg.GetEvents() {
		if r := ev.GetSignalRejected(); r != nil {
			rejected = r
		}
		if a := ev.GetSignalAccepted(); a != nil {
			accepted = a
			require.Equal(t, "operator:carol", ev.GetEmittedBy())
		}
	}
	require.NotNil(t, rejected, "the refusal is logged")
	require.Equal(t, "alice", rejected.GetActor(), "the refusal names the principal")
	require.Equal(t, "not-alice", rejected.GetActorUserId(), "beside the declared actor")
	require.Contains(t, rejected.GetReason(), "separation of duties")
	require.NotNil(t, accepted)
	require.Equal(t, "carol", accepted.GetActor())
	mc := accepted.GetManualCompletion()
	require.Equal(t, "carol", mc.GetPrincipal())
	require.Equal(t, "carol", mc.GetActorUserId())
	require.Equal(t, "stock checked", mc.GetNotes())
	require.Equal(t, []string{"ticket:OPS-7", "photo:42"}, mc.GetEvidenceRefs())
}

func TestManualCompletion_DeclaredActorIsRecordedBesideThePrincipal(t *testing.T) {
	t.Parallel()
	url, alice, carol := auditTeam(t)
	runID, token := waitingManual(t, alice)
	_, err := carol.Signals.CompleteManualAction(context.Background(), connect.NewRequest(manualRequest(runID, token, "alice")))
	require.NoError(t, err, "carol is not the submitter, whatever name she declares")

	req, err := http.NewRequest(http.MethodPost, url+"/weft.v1.RunService/GetRun", strings.NewReader(`{"run_id":"`+runID+`"}`))
	require.NoError(t, err)
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+tokenAcme)
	res, err := apitest.HTTPClient().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	body, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, "body: %s", body)
	var got struct {
		Run struct {
			Steps []struct {
				ManualCompletion map[string]any `json:"manual_completion"`
			} `json:"steps"`
		} `json:"run"`
	}
	require.NoError(t, json.Unmarshal(body, &got))
	mc := got.Run.Steps[0].ManualCompletion
	require.Equal(t, "carol", mc["principal"], "GetRun JSON shows the principal: %s", body)
	require.Equal(t, "alice", mc["actor_user_id"])
	require.Equal(t, "stock checked", mc["notes"])
	require.Equal(t, []any{"ticket:OPS-7", "photo:42"}, mc["evidence_refs"])
}
