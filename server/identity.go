package server

import (
	"context"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	weftv1 "github.com/weft-dev/weft/gen/weft/v1"
	"github.com/weft-dev/weft/gen/weft/v1/weftv1connect"
)

// identityService serves IdentityService: who the server takes the caller
// to be. The permission table lets every authenticated caller call it
// (identity.read, which authentication grants to everyone).
type identityService struct {
	weftv1connect.UnimplementedIdentityServiceHandler
}

// WhoAmI answers the caller's principal, tenant, roles, the permissions
// they grant, and how the caller authenticated.
func (identityService) WhoAmI(ctx context.Context, _ *connect.Request[weftv1.WhoAmIRequest]) (*connect.Response[weftv1.WhoAmIResponse], error) {
	who, err := callerOf(ctx)
	if err != nil {
		return nil, err
	}
	res := &weftv1.WhoAmIResponse{Principal: who.principal, TenantId: who.tenant, Roles: who.roles,
		Permissions: who.perms.names(), AuthMethod: string(who.method)}
	if !who.expires.IsZero() && who.expires.Unix() > 0 {
		res.ExpiresAt = timestamppb.New(who.expires)
	}
	return connect.NewResponse(res), nil
}
