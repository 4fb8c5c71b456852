package server

import (
	"context"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/server/wiretest"
)

// apiMethods answers every method of every service of the weft.v1 package
// the binary knows, as "/weft.v1.RunService/GetRun" with whether it streams:
// the registry, not ServiceNames, so that a new service is found too.
func apiMethods(t *testing.T) map[string]bool {
	t.Helper()
	out := map[string]bool{}
	protoregistry.GlobalFiles.RangeFilesByPackage("weft.v1", func(fd protoreflect.FileDescriptor) bool {
		for i := range fd.Services().Len() {
			sd := fd.Services().Get(i)
			for j := range sd.Methods().Len() {
				md := sd.Methods().Get(j)
				out["/"+string(sd.FullName())+"/"+string(md.Name())] = md.IsStreamingServer()
			}
		}
		return true
	})
	require.NotEmpty(t, out)
	return out
}

func TestPermissionTable_NamesEveryRPCAndNothingElse(t *testing.T) {
	t.Parallel()
	methods := apiMethods(t)
	for procedure := range methods {
		_, ok := PermissionOf(procedure)
		require.True(t, ok, "RPC %s has no entry in the permission table (rpcRules in permissions.go)", procedure)
	}
	for procedure := range rpcRules {
		_, ok := methods[procedure]
		require.True(t, ok, "the permission table names %s, which is no RPC", procedure)
	}
}

func TestRoles_EachRoleGrantsWhatTheIssueSays(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"runs.read", "schedules.read", "queues.read", "identity.read", "definitions.read", "views.read"}, RoleViewer.Permissions())
	require.Equal(t, []string{"runs.read", "runs.submit", "schedules.read", "queues.read", "identity.read",
		"definitions.read", "definitions.write", "views.read", "views.write"}, RoleSubmitter.Permissions())
	require.Equal(t, []string{"runs.read", "runs.submit", "runs.operate", "schedules.read", "queues.read", "identity.read",
		"definitions.read", "definitions.write", "views.read", "views.write"}, RoleOperator.Permissions())
	require.Equal(t, []string{"runs.read", "runs.approve", "manual.complete", "schedules.read", "queues.read", "identity.read",
		"definitions.read", "views.read"}, RoleApprover.Permissions())
	require.Equal(t, []string{"tasks.work", "identity.read"}, RoleWorker.Permissions())
	admin := RoleAdmin.Permissions()
	require.NotContains(t, admin, "tasks.work", "an admin is not a worker")
	require.Len(t, admin, int(permCount)-1)
	require.Nil(t, Role("root").Permissions())
}

// roleToken is the bearer token of the matrix's caller holding role r.
func roleToken(r string) string { return "matrix-token-of-" + r + "-0123456789" }

// matrixServer serves an engine with one token per role, and one without
// roles ("default").
func matrixServer(t *testing.T) string {
	t.Helper()
	specs := []TokenSpec{{Token: roleToken("default"), Tenant: "acme", Principal: "default"}}
	for _, r := range Roles {
		specs = append(specs, TokenSpec{Token: roleToken(string(r)), Tenant: "acme", Principal: string(r), Roles: []string{string(r)}})
	}
	tokens, err := NewTokenSet(specs...)
	require.NoError(t, err)
	cfg := engineConfig(t)
	cfg.Tokens = tokens
	return testServer(t, cfg)
}

// matrixProtocols answers the protocols the matrix calls a method over:
// Connect (its streaming form for a streaming method), gRPC, and JSON-RPC
// for a unary method.
func matrixProtocols(streaming bool) []wiretest.Protocol {
	if streaming {
		return []wiretest.Protocol{wiretest.ConnectStream, wiretest.GRPC}
	}
	return []wiretest.Protocol{wiretest.ConnectJSON, wiretest.GRPC, wiretest.JSONRPC}
}

// emptyRequest answers an empty request message as p carries it.
func emptyRequest(p wiretest.Protocol) []byte {
	body := []byte{}
	if p.JSON {
		body = []byte("{}")
	}
	if p.Enveloped {
		return wiretest.Envelope(body)
	}
	return body
}

// TestPermissionMatrix_EveryRPCByEveryRoleOnEveryProtocol calls every RPC
// as every role over Connect, gRPC and JSON-RPC. A role the table says lacks
// the RPC's permission gets PERMISSION_DENIED naming it; a role that holds
// it gets past the check (whatever the empty request then earns).
func TestPermissionMatrix_EveryRPCByEveryRoleOnEveryProtocol(t *testing.T) {
	t.Parallel()
	url := matrixServer(t)
	methods := apiMethods(t)
	procedures := make([]string, 0, len(methods))
	for p := range methods {
		procedures = append(procedures, p)
	}
	slices.Sort(procedures)
	roles := append(roleStrings(Roles), "default")
	for _, procedure := range procedures {
		perm, ok := PermissionOf(procedure)
		require.True(t, ok, "RPC %s has no entry in the permission table", procedure)
		for _, p := range matrixProtocols(methods[procedure]) {
			for _, role := range roles {
				granted, err := permsOfRoles(rolesOf(role))
				require.NoError(t, err)
				out := callAs(t, url, p, procedure, roleToken(role))
				where := procedure + " as " + role + " over " + p.Name
				if granted.has(perm) {
					require.NotEqual(t, "permission_denied", out.Code, "%s: %s", where, out.Message)
					require.NotEqual(t, "unauthenticated", out.Code, "%s: %s", where, out.Message)
					continue
				}
				require.Equal(t, "permission_denied", out.Code, where)
				require.Equal(t, weftv1.FaultCode_FAULT_CODE_PERMISSION_DENIED, out.Fault.GetCode(), where)
				require.NotEmpty(t, out.Fault.GetCorrelationId(), where)
				require.Contains(t, out.Message, `"`+perm.String()+`"`, where)
			}
		}
	}
}

func rolesOf(role string) []string {
	if role == "default" {
		return nil
	}
	return []string{role}
}

func callAs(t *testing.T, url string, p wiretest.Protocol, procedure, token string) wiretest.Outcome {
	t.Helper()
	req, err := wiretest.Request(context.Background(), url, p, strings.TrimPrefix(procedure, "/"), emptyRequest(p))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	out, err := wiretest.Do(req, p)
	require.NoError(t, err)
	return out
}

func TestPermission_UnauthenticatedCallerLearnsNoPermission(t *testing.T) {
	t.Parallel()
	url := matrixServer(t)
	req, err := wiretest.Request(context.Background(), url, wiretest.ConnectJSON, "weft.v1.RunService/DeleteRun", []byte(`{}`))
	require.NoError(t, err)
	out, err := wiretest.Do(req, wiretest.ConnectJSON)
	require.NoError(t, err)
	require.Equal(t, "unauthenticated", out.Code)
	require.NotContains(t, out.Message, "runs.delete")
}

func TestPermission_DenialComesBeforeValidationAndSaysNothingOfTheTarget(t *testing.T) {
	t.Parallel()
	url := matrixServer(t)
	// A malformed request from a viewer: the denial, not the violation, answers.
	req, err := wiretest.Request(context.Background(), url, wiretest.ConnectJSON, "weft.v1.RunService/CancelRun",
		[]byte(`{"runId":"run-that-does-not-exist"}`))
	require.NoError(t, err)
	req.Header.Set("Authorization", "Bearer "+roleToken("viewer"))
	out, err := wiretest.Do(req, wiretest.ConnectJSON)
	require.NoError(t, err)
	require.Equal(t, http.StatusForbidden, out.HTTPStatus)
	require.Equal(t, "permission_denied", out.Code)
	require.NotContains(t, string(out.Raw), "run-that-does-not-exist")
	require.Contains(t, out.Message, "operator, admin")
}

func TestTokenSet_RefusesAnUnknownRoleNamingIt(t *testing.T) {
	t.Parallel()
	_, err := NewTokenSet(TokenSpec{Token: roleToken("x"), Tenant: "acme", Principal: "p", Roles: []string{"viewer", "root"}})
	require.ErrorContains(t, err, `unknown role "root"`)
	require.NotContains(t, err.Error(), roleToken("x"))
}

func TestParseTokenFile_ReadsRoles(t *testing.T) {
	t.Parallel()
	specs, err := ParseTokenFile([]byte(`{"tokens":[{"token":"t","tenant":"a","principal":"p","roles":["viewer","worker"]}]}`))
	require.NoError(t, err)
	require.Equal(t, []string{"viewer", "worker"}, specs[0].Roles)
}

func TestOpenServer_CallerHoldsEveryPermission(t *testing.T) {
	t.Parallel()
	url := testServer(t, engineConfig(t))
	req, err := wiretest.Request(context.Background(), url, wiretest.ConnectJSON, "weft.v1.RunService/ListRuns", []byte(`{}`))
	require.NoError(t, err)
	out, err := wiretest.Do(req, wiretest.ConnectJSON)
	require.NoError(t, err)
	require.False(t, out.Failed(), "%s: %s", out.Code, out.Message)
}
