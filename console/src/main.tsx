// The console's shell: sign-in (with the identity provider, or a pasted
// token) when weftd asks for it, who is signed in, and a hash router between
// the runs list (#/), a run (#/runs/<id>), starting a run (#/start), the
// batches (#/batches) and one (#/batches/<id>), the schedules (#/schedules),
// the queues (#/queues) and the audit log (#/audit).
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import type { WhoAmIResponse } from "../../client/ts/src/gen/weft/v1/identity_pb";
import { api, authConfig, faultOf, signInWithToken, signOut, SIGNED_OUT, type AuthConfig, type Fault } from "./api";
import { can, setMe } from "./me";
import { FaultView } from "./ui";
import { RunsPage } from "./runs";
import { RunPage } from "./run";
import { SchedulesPage } from "./schedules";
import { AuditPage } from "./audit";
import { StartPage } from "./start";
import { BatchPage, BatchesPage } from "./batch";
import { QueuesPage } from "./queues";
import { ms } from "./format";

type Access =
  | { state: "checking" }
  | { state: "in"; me: WhoAmIResponse; cfg: AuthConfig }
  | { state: "signin"; cfg: AuthConfig; message?: string }
  | { state: "down"; fault: Fault };

/** probe asks weftd who this browser is signed in as, if anyone. */
async function probe(message?: string): Promise<Access> {
  let cfg: AuthConfig;
  try {
    cfg = await authConfig();
  } catch (e) {
    return { state: "down", fault: faultOf(e) };
  }
  try {
    const me = await api.identity.whoAmI({});
    setMe(me);
    return { state: "in", me, cfg };
  } catch (e) {
    const f = faultOf(e);
    setMe(undefined);
    if (f.unauthenticated) return { state: "signin", cfg, message };
    return { state: "down", fault: f };
  }
}

/** signInError takes the reason weftd's sign-in callback put in the fragment. */
function signInError(): string | undefined {
  const m = /^#\/signin\?error=(.*)$/.exec(location.hash);
  if (!m) return undefined;
  history.replaceState(null, "", "#/");
  return decodeURIComponent(m[1].replace(/\+/g, " "));
}

function useRoute(): string {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const on = () => setHash(location.hash);
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return hash;
}

function SignIn({ cfg, message, onSignedIn }: { cfg: AuthConfig; message?: string; onSignedIn: (a: Access) => void }) {
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const [refused, setRefused] = useState<string | undefined>();
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    const err = await signInWithToken(token.trim());
    setToken(""); // weftd keeps it in the session; the page does not
    setBusy(false);
    if (err) return setRefused(err);
    onSignedIn(await probe());
  };
  return (
    <main class="signin">
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to Weft</h1>
        {message && (
          <p class="refused" role="alert" id="signin-message">
            {message}
          </p>
        )}
        {cfg.oidc && (
          <>
            <a class="button primary" id="signin-oidc" href="/ui/auth/login">
              Sign in with your identity provider
            </a>
            <p class="muted">weftd signs you in with the authorization-code flow and PKCE and keeps your tokens on the server; this page never sees them.</p>
          </>
        )}
        {cfg.tokens && (
          <>
            <p>{cfg.oidc ? "Or paste a bearer token." : "This weftd needs a bearer token."} weftd keeps it in your session until you sign out or close the browser.</p>
            <label>
              Bearer token
              <input id="token" type="password" autocomplete="off" required value={token} onInput={(e) => setToken(e.currentTarget.value)} autofocus={!cfg.oidc} />
            </label>
            <button type="submit" class={cfg.oidc ? "" : "primary"} disabled={busy || token.trim() === ""}>
              Sign in with the token
            </button>
          </>
        )}
        {refused && (
          <div class="refused" role="alert">
            <strong>The token was refused.</strong> <span id="token-refused">{refused}</span>
          </div>
        )}
      </form>
    </main>
  );
}

/** Who shows the signed-in caller: principal, tenant, roles, how they signed in. */
function Who({ me }: { me: WhoAmIResponse }) {
  const until = ms(me.expiresAt);
  const roles = me.authMethod === "none" ? "every permission (no sign-in configured)" : me.roles.join(", ") || "no roles";
  return (
    <span class="who" id="who" data-expires={until ?? ""} title={`Signed in with ${me.authMethod}${until ? `; token valid until ${new Date(until).toLocaleTimeString()}, renewed by weftd while it can` : ""}`}>
      <strong id="who-principal">{me.principal}</strong> · <span id="who-tenant">{me.tenantId}</span> · <span id="who-roles">{roles}</span>
      <span class="muted"> ({me.authMethod})</span>
    </span>
  );
}

/** useSessionWatch asks weftd again before the session's token expires (weftd renews it, or
 *  the session ends and the page goes back to sign-in) and on every UNAUTHENTICATED answer. */
function useSessionWatch(access: Access, setAccess: (a: Access) => void) {
  useEffect(() => {
    if (access.state !== "in") return;
    let fired = false; // the first answer says why; the calls refused after it only say that it ended
    const ended = (e: Event) => {
      if (fired) return;
      fired = true;
      const why = (e as CustomEvent<string>).detail || "your session ended; sign in again";
      probe(why.charAt(0).toUpperCase() + why.slice(1)).then(setAccess);
    };
    addEventListener(SIGNED_OUT, ended);
    const until = ms(access.me.expiresAt);
    let timer: number | undefined;
    if (until !== undefined) {
      const wait = Math.max(1000, Math.min(60_000, (until - Date.now()) / 2));
      timer = window.setTimeout(() => {
        api.identity.whoAmI({}).then((me) => {
          setMe(me);
          setAccess({ ...access, me });
        }, () => undefined); // an UNAUTHENTICATED answer arrives as SIGNED_OUT
      }, wait);
    }
    return () => {
      removeEventListener(SIGNED_OUT, ended);
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [access]);
}

function App() {
  const [access, setAccess] = useState<Access>({ state: "checking" });
  const hash = useRoute();
  useEffect(() => {
    probe(signInError()).then(setAccess);
  }, []);
  useSessionWatch(access, setAccess);
  if (access.state === "checking") return <main class="loading">Connecting to weftd…</main>;
  if (access.state === "signin") return <SignIn cfg={access.cfg} message={access.message} onSignedIn={setAccess} />;
  if (access.state === "down")
    return (
      <main class="page">
        <h1>weftd did not answer</h1>
        <FaultView fault={access.fault} />
      </main>
    );
  const runMatch = /^#\/runs\/(.+)$/.exec(hash);
  const batchMatch = /^#\/batches\/(.+)$/.exec(hash);
  const start = hash === "#/start";
  const batches = hash === "#/batches";
  const schedules = hash === "#/schedules";
  const audit = hash.startsWith("#/audit");
  const queues = hash === "#/queues";
  const leave = async () => {
    await signOut();
    setMe(undefined);
    location.hash = "#/";
    setAccess({ state: "signin", cfg: access.cfg, message: "You signed out." });
  };
  return (
    <>
      <header class="top">
        <a href="#/" class="brand">
          Weft
        </a>
        <nav aria-label="Main">
          <a href="#/" aria-current={runMatch || batchMatch || batches || start || schedules || audit || queues ? undefined : "page"}>
            Runs
          </a>
          <a href="#/batches" aria-current={batches || batchMatch ? "page" : undefined}>
            Batches
          </a>
          <a href="#/schedules" aria-current={schedules ? "page" : undefined}>
            Schedules
          </a>
          {can("queues.read") && (
            <a href="#/queues" id="nav-queues" aria-current={queues ? "page" : undefined}>
              Queues
            </a>
          )}
          {can("audit.read") && (
            <a href="#/audit" id="nav-audit" aria-current={audit ? "page" : undefined}>
              Audit log
            </a>
          )}
        </nav>
        <Who me={access.me} />
        {!access.cfg.open && (
          <button type="button" class="link" id="sign-out" onClick={leave}>
            Sign out
          </button>
        )}
      </header>
      {runMatch ? (
        <RunPage key={runMatch[1]} runId={decodeURIComponent(runMatch[1])} />
      ) : batchMatch ? (
        <BatchPage key={batchMatch[1]} batchId={decodeURIComponent(batchMatch[1])} />
      ) : batches ? (
        <BatchesPage />
      ) : start ? (
        <StartPage />
      ) : schedules ? (
        <SchedulesPage />
      ) : audit ? (
        <AuditPage />
      ) : queues ? (
        <QueuesPage />
      ) : (
        <RunsPage />
      )}
    </>
  );
}

render(<App />, document.getElementById("app")!);
