package server

import (
	"fmt"
	"slices"
	"strings"
)

// Permission is one power an RPC needs (the permission table in
// permissions.go names, for every RPC, the one it needs). A role is a set of
// permissions.
type Permission uint8

// The permissions. Their names (String) are what a PERMISSION_DENIED fault
// names and what docs/security.md lists.
const (
	PermRunsRead         Permission = iota // read runs, their events and manual actions
	PermRunsSubmit                         // submit and start runs
	PermRunsOperate                        // pause, resume, cancel, retry, skip, signal
	PermRunsApprove                        // approve a run that waits for approval
	PermManualComplete                     // complete a manual step
	PermRunsDelete                         // delete a finished run
	PermSchedulesRead                      // read schedules
	PermSchedulesWrite                     // create, change, fire, backfill, delete schedules
	PermQueuesRead                         // read queues and the workers polling them
	PermTasksWork                          // poll, complete, fail, heartbeat, verify tasks
	PermAuditRead                          // read the audit log
	PermIdentityRead                       // read who the server takes the caller to be (WhoAmI)
	PermDefinitionsRead                    // read the definition registry
	PermDefinitionsWrite                   // store new definition versions in the registry
	PermViewsRead                          // list the runs list's saved views
	PermViewsWrite                         // save and delete the runs list's saved views
	permCount
)

var permissionNames = [permCount]string{
	PermRunsRead:         "runs.read",
	PermRunsSubmit:       "runs.submit",
	PermRunsOperate:      "runs.operate",
	PermRunsApprove:      "runs.approve",
	PermManualComplete:   "manual.complete",
	PermRunsDelete:       "runs.delete",
	PermSchedulesRead:    "schedules.read",
	PermSchedulesWrite:   "schedules.write",
	PermQueuesRead:       "queues.read",
	PermTasksWork:        "tasks.work",
	PermAuditRead:        "audit.read",
	PermIdentityRead:     "identity.read",
	PermDefinitionsRead:  "definitions.read",
	PermDefinitionsWrite: "definitions.write",
	PermViewsRead:        "views.read",
	PermViewsWrite:       "views.write",
}

// String answers the permission's name, e.g. "runs.operate".
func (p Permission) String() string {
	if p < permCount {
		return permissionNames[p]
	}
	return fmt.Sprintf("permission(%d)", uint8(p))
}

// permSet is a set of permissions, one bit each.
type permSet uint32

func permsOf(ps ...Permission) permSet {
	var s permSet
	for _, p := range ps {
		s |= 1 << p
	}
	return s
}

// has reports whether the set holds p.
func (s permSet) has(p Permission) bool { return s&(1<<p) != 0 }

// allPerms is every permission: the caller of a server without tokens.
const allPerms = permSet(1<<permCount - 1)

// Role names a set of permissions a token (or an OIDC claim) grants within
// its tenant.
type Role string

// The roles. Each grants what the one above it grants plus its own, except
// approver (a viewer that may approve and complete manual steps) and worker
// (only the task protocol).
const (
	RoleViewer    Role = "viewer"
	RoleSubmitter Role = "submitter"
	RoleOperator  Role = "operator"
	RoleApprover  Role = "approver"
	RoleWorker    Role = "worker"
	RoleAdmin     Role = "admin"
)

var (
	viewerPerms    = permsOf(PermRunsRead, PermSchedulesRead, PermQueuesRead, PermIdentityRead, PermDefinitionsRead, PermViewsRead)
	submitterPerms = viewerPerms | permsOf(PermRunsSubmit, PermDefinitionsWrite, PermViewsWrite)
	operatorPerms  = submitterPerms | permsOf(PermRunsOperate)
	approverPerms  = viewerPerms | permsOf(PermRunsApprove, PermManualComplete)
	workerPerms    = permsOf(PermTasksWork, PermIdentityRead)
	adminPerms     = operatorPerms | approverPerms | permsOf(PermRunsDelete, PermSchedulesWrite, PermAuditRead)
)

// rolePerms is the one table of what each role grants.
var rolePerms = map[Role]permSet{
	RoleViewer:    viewerPerms,
	RoleSubmitter: submitterPerms,
	RoleOperator:  operatorPerms,
	RoleApprover:  approverPerms,
	RoleWorker:    workerPerms,
	RoleAdmin:     adminPerms,
}

// Roles lists every role, in the order the documentation gives them.
var Roles = []Role{RoleViewer, RoleSubmitter, RoleOperator, RoleApprover, RoleWorker, RoleAdmin}

// DefaultRoles are the roles of a token that names none: admin and worker,
// every permission, which is what every token could do before roles
// existed. weftd warns at start about each such token.
var DefaultRoles = []Role{RoleAdmin, RoleWorker}

// Permissions answers the names of the permissions the role grants, in the
// permission table's order; nil for an unknown role.
func (r Role) Permissions() []string {
	s, ok := rolePerms[r]
	if !ok {
		return nil
	}
	return s.names()
}

func (s permSet) names() []string {
	var out []string
	for p := range permCount {
		if s.has(p) {
			out = append(out, p.String())
		}
	}
	return out
}

// permsOfRoles answers the union of the roles' permissions, or an error
// naming the first unknown role; no roles at all answers DefaultRoles'.
func permsOfRoles(roles []string) (permSet, error) {
	if len(roles) == 0 {
		roles = roleStrings(DefaultRoles)
	}
	var s permSet
	for _, r := range roles {
		p, ok := rolePerms[Role(r)]
		if !ok {
			return 0, fmt.Errorf("unknown role %q: roles are %s", r, strings.Join(roleStrings(Roles), ", "))
		}
		s |= p
	}
	return s, nil
}

func roleStrings(roles []Role) []string {
	out := make([]string, len(roles))
	for i, r := range roles {
		out[i] = string(r)
	}
	return out
}

// rolesGranting answers the roles that grant p, for a denial's message.
func rolesGranting(p Permission) []string {
	var out []string
	for _, r := range Roles {
		if rolePerms[r].has(p) {
			out = append(out, string(r))
		}
	}
	return slices.Clip(out)
}
