// Who is signed in (IdentityService.WhoAmI), and what their roles let them do:
// every action the console offers asks can() first, and says why() when not.
import type { WhoAmIResponse } from "../../client/ts/src/gen/weft/v1/identity_pb";

let me: WhoAmIResponse | undefined;

/** setMe records the signed-in caller. */
export function setMe(m: WhoAmIResponse | undefined): void {
  me = m;
}

/** can reports whether the signed-in caller's roles grant the permission. */
export function can(permission: string): boolean {
  return !!me && me.permissions.includes(permission);
}

/** The roles that grant each permission (docs/security.md's table). */
const granting: Record<string, string> = {
  "runs.submit": "submitter, operator, admin",
  "runs.operate": "operator, admin",
  "runs.approve": "approver, admin",
  "manual.complete": "approver, admin",
  "runs.delete": "admin",
  "schedules.write": "admin",
  "audit.read": "admin",
};

/** why says why an action is off: the permission it needs and who has it. */
export function why(permission: string): string {
  const roles = me && me.roles.length > 0 ? me.roles.join(", ") : "none";
  return `needs ${permission} (${granting[permission] ?? "another role"}); your roles: ${roles}`;
}
