// Saved views of the runs list (ViewService, docs/semantics.md#saved-views):
// a named query and the list's other filters, saved for the tenant and
// listed for everyone in it. Opening one fills the filters and applies them;
// #/?view=<name> opens one from a link.
import { useEffect, useState } from "preact/hooks";
import type { View } from "../../client/ts/src/gen/weft/v1/view_pb";
import { api, faultOf, type Fault } from "./api";
import { can, why } from "./me";
import { Dialog, FaultView } from "./ui";
import { filtersOf, filtersSummary, viewFilters, type Filters } from "./filters";
import { when } from "./format";

/** How many views the picker reads (ListViews' largest page). */
const VIEWS = 1000;

/** viewInLink answers the view a #/?view=<name> link names, if any. */
export function viewInLink(): string | undefined {
  const m = /^#\/\?view=(.*)$/.exec(location.hash);
  return m ? decodeURIComponent(m[1]) : undefined;
}

/** SavedViews lists the tenant's views, opens one into the filters, saves the current filters as one, and deletes one. */
export function SavedViews({ current, onOpen }: { current: Filters; onOpen: (f: Filters) => void }) {
  const [views, setViews] = useState<View[] | undefined>();
  const [fault, setFault] = useState<Fault | undefined>();
  const [open, setOpen] = useState<string>(""); // the name of the view last opened
  const [dialog, setDialog] = useState<"save" | "delete" | undefined>();
  const [done, setDone] = useState<string | undefined>();

  const reload = async (): Promise<View[] | undefined> => {
    try {
      const res = await api.views.listViews({ pageSize: VIEWS });
      setViews(res.views);
      setFault(undefined);
      return res.views;
    } catch (e) {
      setFault(faultOf(e));
      return undefined;
    }
  };

  const openView = (v: View) => {
    setOpen(v.name);
    setDone(undefined);
    if (location.hash !== `#/?view=${encodeURIComponent(v.name)}`) history.replaceState(null, "", `#/?view=${encodeURIComponent(v.name)}`);
    onOpen(filtersOf(v));
  };

  useEffect(() => {
    reload().then((vs) => {
      const linked = viewInLink();
      const v = linked === undefined ? undefined : vs?.find((x) => x.name === linked);
      if (v) openView(v);
      else if (linked !== undefined) setDone(`No view is named ${linked}.`);
    });
  }, []);

  // What was said about the last save or delete goes with the filters it was about.
  const shown = JSON.stringify(current);
  useEffect(() => setDone(undefined), [shown]);

  const chosen = views?.find((v) => v.name === open);
  return (
    <div class="views" role="region" aria-label="Saved views">
      <label>
        Saved view
        <select
          id="view-pick"
          value={open}
          disabled={!views || views.length === 0}
          onChange={(e) => {
            const v = views?.find((x) => x.name === e.currentTarget.value);
            if (v) openView(v);
            else setOpen("");
          }}
        >
          <option value="">{views && views.length === 0 ? "none saved yet" : "choose a view…"}</option>
          {views?.map((v) => (
            <option key={v.name} value={v.name}>
              {v.name}
            </option>
          ))}
        </select>
      </label>
      <button type="button" id="view-save" disabled={!can("views.write")} title={can("views.write") ? undefined : why("views.write")} onClick={() => setDialog("save")}>
        Save view…
      </button>
      {chosen && (
        <button type="button" id="view-delete" class="danger" disabled={!can("views.write")} title={can("views.write") ? undefined : why("views.write")} onClick={() => setDialog("delete")}>
          Delete view
        </button>
      )}
      {chosen && (
        <span class="muted" id="view-about">
          saved by {chosen.savedBy} {when(chosen.savedAt)}
        </span>
      )}
      {done && (
        <span class="accepted" id="view-done">
          {done}
        </span>
      )}
      {fault && <FaultView fault={fault} />}
      {dialog === "save" && (
        <SaveViewDialog
          name={open}
          current={current}
          onClose={() => setDialog(undefined)}
          onSaved={async (v, created) => {
            setDialog(undefined);
            await reload();
            setOpen(v.name);
            history.replaceState(null, "", `#/?view=${encodeURIComponent(v.name)}`);
            setDone(`View ${v.name} ${created ? "saved" : "replaced"}: everyone in the tenant sees it.`);
          }}
        />
      )}
      {dialog === "delete" && chosen && (
        <DeleteViewDialog
          view={chosen}
          onClose={() => setDialog(undefined)}
          onDeleted={async () => {
            setDialog(undefined);
            setOpen("");
            history.replaceState(null, "", "#/");
            await reload();
            setDone(`View ${chosen.name} deleted.`);
          }}
        />
      )}
    </div>
  );
}

function SaveViewDialog({ name: initial, current, onSaved, onClose }: { name: string; current: Filters; onSaved: (v: View, created: boolean) => void; onClose: () => void }) {
  const [name, setName] = useState(initial);
  const [busy, setBusy] = useState(false);
  const [fault, setFault] = useState<Fault | undefined>();
  const save = async () => {
    setBusy(true);
    setFault(undefined);
    try {
      const res = await api.views.saveView({ view: { name: name.trim(), query: current.query.trim(), filters: viewFilters(current) } });
      if (res.view) onSaved(res.view, res.created);
    } catch (e) {
      setFault(faultOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title="Save this view" confirm="Save view" busy={busy} onConfirm={save} onClose={onClose}>
      <p>Everyone in your tenant sees the views you save. A name already taken replaces that view.</p>
      <label>
        Name
        <input id="view-name" required maxLength={128} value={name} onInput={(e) => setName(e.currentTarget.value)} autofocus />
      </label>
      <p class="muted" id="view-keeps">
        Keeps: {filtersSummary(current)}
      </p>
      {fault && <FaultView fault={fault} />}
    </Dialog>
  );
}

function DeleteViewDialog({ view, onDeleted, onClose }: { view: View; onDeleted: () => void; onClose: () => void }) {
  const [busy, setBusy] = useState(false);
  const [fault, setFault] = useState<Fault | undefined>();
  const del = async () => {
    setBusy(true);
    try {
      await api.views.deleteView({ name: view.name });
      onDeleted();
    } catch (e) {
      setFault(faultOf(e));
    } finally {
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Delete the view ${view.name}?`} confirm="Delete view" danger busy={busy} onConfirm={del} onClose={onClose}>
      <p>It is gone for everyone in the tenant; the runs it shows are not touched.</p>
      {fault && <FaultView fault={fault} />}
    </Dialog>
  );
}
