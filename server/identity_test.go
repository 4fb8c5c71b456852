package server

import (
	"context"
	"testing"

	"connectrpc.com/connect"
	"github.com/stretchr/testify/require"

	"github.com/weft-dev/weft/conformance/apitest"
	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

func whoAmI(t *testing.T, url string, p apitest.Protocol) (*weftv1.WhoAmIResponse, error) {
	t.Helper()
	res, err := weftv1connect.NewIdentityServiceClient(apitest.HTTPClient(), url, p.Options...).
		WhoAmI(context.Background(), connect.NewRequest(&weftv1.WhoAmIRequest{}))
	if err != nil {
		return nil, err
	}
	return res.Msg, nil
}

// TestWhoAmI_AnswersTheCallersRolesAndWhatTheyGrantOnEveryProtocol: each
// role's token learns its principal, tenant, roles and exactly the
// permissions the role table grants, and how it authenticated.
func TestWhoAmI_AnswersTheCallersRolesAndWhatTheyGrantOnEveryProtocol(t *testing.T) {
	url := matrixServer(t)
	for _, p := range apitest.Protocols {
		for _, r := range Roles {
			got, err := whoAmI(t, url, apitest.WithBearer(p, roleToken(string(r))))
			require.NoError(t, err, "%s as %s", p.Name, r)
			require.Equal(t, string(r), got.GetPrincipal())
			require.Equal(t, "acme", got.GetTenantId())
			require.Equal(t, []string{string(r)}, got.GetRoles())
			require.Equal(t, r.Permissions(), got.GetPermissions())
			require.Equal(t, "token", got.GetAuthMethod())
			require.Nil(t, got.GetExpiresAt())
		}
		got, err := whoAmI(t, url, apitest.WithBearer(p, roleToken("default")))
		require.NoError(t, err)
		require.Equal(t, roleStrings(DefaultRoles), got.GetRoles(), "a token naming no role has the default roles")
	}
}

func TestWhoAmI_IsUnauthenticatedWithoutCredentials(t *testing.T) {
	_, err := whoAmI(t, matrixServer(t), apitest.Protocols[0])
	require.Equal(t, connect.CodeUnauthenticated, connect.CodeOf(err))
}

func TestWhoAmI_OnAnOpenServerIsTheAnonymousCallerWithEveryPermission(t *testing.T) {
	got, err := whoAmI(t, testServer(t, engineConfig(t)), apitest.Protocols[0])
	require.NoError(t, err)
	require.Equal(t, AnonymousCaller, got.GetPrincipal())
	require.Equal(t, DefaultTenant, got.GetTenantId())
	require.Equal(t, "none", got.GetAuthMethod())
	require.Empty(t, got.GetRoles())
	require.Equal(t, allPerms.names(), got.GetPermissions())
}
