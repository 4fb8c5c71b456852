// The console's shell: sign-in when weftd asks for a token, and a hash router
// between the runs list (#/), a run (#/runs/<id>) and the schedules (#/schedules).
import { render } from "preact";
import { useEffect, useState } from "preact/hooks";
import { api, faultOf, sessionToken, setSessionToken, type Fault } from "./api";
import { FaultView } from "./ui";
import { RunsPage } from "./runs";
import { RunPage } from "./run";
import { SchedulesPage } from "./schedules";

type Access = { state: "checking" } | { state: "open" } | { state: "signin"; refused?: Fault } | { state: "down"; fault: Fault };

/** probe asks weftd for one run: it answers whether this tab may read runs. */
async function probe(): Promise<Access> {
  try {
    await api.runs.listRuns({ pageSize: 1 });
    return { state: "open" };
  } catch (e) {
    const f = faultOf(e);
    if (f.unauthenticated) return sessionToken() ? { state: "signin", refused: f } : { state: "signin" };
    return { state: "down", fault: f };
  }
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

function SignIn({ refused, onSignedIn }: { refused?: Fault; onSignedIn: (a: Access) => void }) {
  const [token, setToken] = useState("");
  const [busy, setBusy] = useState(false);
  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setSessionToken(token.trim());
    const a = await probe();
    if (a.state === "signin") setSessionToken("");
    setBusy(false);
    onSignedIn(a);
  };
  return (
    <main class="signin">
      <form onSubmit={submit} aria-labelledby="signin-title">
        <h1 id="signin-title">Sign in to Weft</h1>
        <p>This weftd needs a bearer token. The console keeps it for this tab only and sends it with every call.</p>
        <label>
          Bearer token
          <input id="token" type="password" autocomplete="off" required value={token} onInput={(e) => setToken(e.currentTarget.value)} autofocus />
        </label>
        <button type="submit" class="primary" disabled={busy || token.trim() === ""}>
          Sign in
        </button>
        {refused && (
          <div class="refused" role="alert">
            <strong>The token was refused.</strong>
            <FaultView fault={refused} />
          </div>
        )}
      </form>
    </main>
  );
}

function App() {
  const [access, setAccess] = useState<Access>({ state: "checking" });
  const hash = useRoute();
  useEffect(() => {
    probe().then(setAccess);
  }, []);
  if (access.state === "checking") return <main class="loading">Connecting to weftd…</main>;
  if (access.state === "signin") return <SignIn refused={access.refused} onSignedIn={setAccess} />;
  if (access.state === "down")
    return (
      <main class="page">
        <h1>weftd did not answer</h1>
        <FaultView fault={access.fault} />
      </main>
    );
  const runMatch = /^#\/runs\/(.+)$/.exec(hash);
  const schedules = hash === "#/schedules";
  const signOut = () => {
    setSessionToken("");
    location.hash = "#/";
    setAccess({ state: "signin" });
  };
  return (
    <>
      <header class="top">
        <a href="#/" class="brand">
          Weft
        </a>
        <nav aria-label="Main">
          <a href="#/" aria-current={runMatch || schedules ? undefined : "page"}>
            Runs
          </a>
          <a href="#/schedules" aria-current={schedules ? "page" : undefined}>
            Schedules
          </a>
        </nav>
        {sessionToken() && (
          <button type="button" class="link" onClick={signOut}>
            Sign out
          </button>
        )}
      </header>
      {runMatch ? <RunPage key={runMatch[1]} runId={decodeURIComponent(runMatch[1])} /> : schedules ? <SchedulesPage /> : <RunsPage />}
    </>
  );
}

render(<App />, document.getElementById("app")!);
