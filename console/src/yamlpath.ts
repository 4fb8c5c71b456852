// Finds the line of a YAML path (spec.steps[1].timeout, as weftd names a
// problem of a pasted workflow) in the text as typed, so the console can say
// where to edit. It reads block-style YAML — keys, "- " list items, nested by
// indentation — which is how workflows are written; a path into a flow-style
// value ({…}, […]) answers the line of the deepest part it found, and a path
// it cannot place answers undefined.

interface Line {
  n: number; // 1-based
  indent: number;
  dash: boolean; // a "- " list item
  text: string; // after the indentation and the dash
}

function linesOf(src: string): Line[] {
  const out: Line[] = [];
  src.split("\n").forEach((raw, i) => {
    const m = /^( *)(- +|-$)?(.*)$/.exec(raw.replace(/\r$/, ""))!;
    const text = m[3];
    if (text.trim() === "" && !m[2]) return;
    if (text.trimStart().startsWith("#") && !m[2]) return;
    out.push({ n: i + 1, indent: m[1].length, dash: !!m[2], text });
  });
  return out;
}

/** segments splits "spec.steps[1].timeout" into ["spec", "steps", 1, "timeout"]. */
function segments(path: string): (string | number)[] | undefined {
  const out: (string | number)[] = [];
  for (const part of path.split(".")) {
    const m = /^([^[\]]*)((?:\[\d+\])*)$/.exec(part);
    if (!m) return undefined;
    if (m[1] !== "") out.push(m[1]);
    for (const idx of m[2].matchAll(/\[(\d+)\]/g)) out.push(Number(idx[1]));
  }
  return out;
}

const isKey = (text: string, key: string) => text.startsWith(`${key}:`) || text.startsWith(`"${key}":`) || text.startsWith(`'${key}':`);

/** yamlLine answers the 1-based line of path in src, or undefined. */
export function yamlLine(src: string, path: string): number | undefined {
  const segs = segments(path);
  if (!segs || segs.length === 0) return undefined;
  const lines = linesOf(src);
  // range: the lines of the current value; block: where its entries start
  // (the column of its keys, or of its dashes for a list).
  let range = lines;
  let found: number | undefined;
  for (const seg of segs) {
    if (range.length === 0) return found;
    const first = range[0];
    if (typeof seg === "number") {
      const at = first.indent;
      const items = range.map((l, i) => ({ l, i })).filter(({ l }) => l.dash && l.indent === at);
      if (!first.dash || seg >= items.length) return found;
      const start = items[seg].i;
      const end = seg + 1 < items.length ? items[seg + 1].i : range.length;
      found = items[seg].l.n;
      // The item's own line holds its first key, one column in from the dash.
      range = [{ ...items[seg].l, indent: at + 2, dash: false }, ...range.slice(start + 1, end)];
      continue;
    }
    if (first.dash) return found; // a list has no keys
    const block = first.indent;
    const i = range.findIndex((l) => l.indent === block && !l.dash && isKey(l.text, seg));
    if (i < 0) return found;
    found = range[i].n;
    const rest = range.slice(i + 1);
    const end = rest.findIndex((l) => l.indent < block || (l.indent === block && !(l.dash && !hasValue(range[i].text))));
    range = end < 0 ? rest : rest.slice(0, end);
  }
  return found;
}

/** hasValue: a "key: value" line, whose children cannot be a list at the key's own column. */
function hasValue(text: string): boolean {
  const v = text.slice(text.indexOf(":") + 1).trim();
  return v !== "" && !v.startsWith("#");
}
