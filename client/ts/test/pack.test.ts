// The package as `npm pack` makes it: installed from the tarball into a fresh
// Node project, imported by name (ES modules and type declarations), and used
// against a real weftd: a client submits a YAML workflow, a worker from
// "@weft-dev/client/worker" runs it, and the result comes back. Its
// dependencies come from npm's cache where it holds them (--prefer-offline): a
// machine that ran `npm ci` has their tarballs but not always the registry
// metadata an install by version range needs, so --offline fails there.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { repoRoot, startWeftd } from "./support/weftd.js";
import { childEnv } from "./support/env.js";

const npm = process.platform === "win32" ? "npm.cmd" : "npm";

const consumer = `
import { createWeftClient, RunStatus, fromValue } from "@weft-dev/client";
import { Worker } from "@weft-dev/client/worker";

const weft = createWeftClient({ baseUrl: process.env.WEFT_URL });
const worker = new Worker(weft, { workerId: "packed", pollWaitMs: 1000 });
worker.activity("packed-greet", (input) => "hello " + input.name);
const running = worker.run({ shutdownOn: [] });
const { run } = await weft.submit(
  "metadata: {name: packed, version: '1'}\\nspec:\\n  steps:\\n    - name: greet\\n      activity: packed-greet\\n      input: {name: Ada}\\n",
);
const done = await weft.awaitRun(run.runId, { timeoutMs: 30000 });
worker.shutdown();
await running;
console.log(JSON.stringify({ status: RunStatus[done.status], output: fromValue(done.steps[0].output) }));
`;

// Type-checks against the package's declarations as a Node project would resolve them.
const typed = `
import { createWeftClient, parseDefinition, type WeftClient, type Run } from "@weft-dev/client";
import { Worker, ErrorClass, fail, type ActivityContext } from "@weft-dev/client/worker";
const weft: WeftClient = createWeftClient({ baseUrl: "http://127.0.0.1:7400" });
const w = new Worker(weft);
w.activity<{ n: number }, { twice: number }>("double", (input, ctx: ActivityContext) => {
  if (ctx.signal.aborted) throw fail(ErrorClass.CANCELLED, "stopped", "stopped");
  return { twice: input.n * 2 };
});
const def = parseDefinition("planId: p\\nsteps: [{name: a}]");
export const first: string = def.actions[0].id;
export type R = Run;
`;

test("npm pack makes a package a fresh Node project installs from the tarball, imports by name, type-checks and runs", async () => {
  const root = repoRoot();
  const work = mkdtempSync(join(tmpdir(), "weft-pack-"));
  const weftd = await startWeftd();
  try {
    execFileSync(npm, ["pack", "--pack-destination", work, "--silent"], { cwd: join(root, "client/ts"), env: childEnv({}), stdio: ["ignore", "pipe", "inherit"] });
    const tarball = readdirSync(work).find((f) => f.endsWith(".tgz"));
    assert.ok(tarball, "npm pack made no tarball");
    const listing = execFileSync("tar", ["-tzf", join(work, tarball)], { encoding: "utf8" }).split("\n");
    for (const f of ["package/package.json", "package/README.md", "package/dist/index.js", "package/dist/index.d.ts", "package/dist/worker/index.js", "package/dist/gen/weft/v1/run_pb.js"]) {
      assert.ok(listing.includes(f), `the tarball lacks ${f}`);
    }
    assert.ok(!listing.some((f) => f.includes("/test/") || f.includes("dist-test")), "the tarball carries tests");

    const app = join(work, "app");
    execFileSync("mkdir", ["-p", app]);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    execFileSync(npm, ["install", "--prefer-offline", "--no-audit", "--no-fund", "--ignore-scripts", "--silent", join(work, tarball)], {
      cwd: app,
      env: childEnv({}),
      stdio: ["ignore", "pipe", "inherit"],
    });
    writeFileSync(join(app, "main.mjs"), consumer);
    const out = execFileSync(process.execPath, ["main.mjs"], { cwd: app, env: childEnv({ WEFT_URL: weftd.url }), encoding: "utf8" });
    assert.deepEqual(JSON.parse(out.trim().split("\n").at(-1)!), { status: "COMPLETED", output: "hello Ada" });

    writeFileSync(join(app, "typed.ts"), typed);
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: { strict: true, noEmit: true, module: "nodenext", moduleResolution: "nodenext", target: "es2022", lib: ["es2022", "dom"], types: [] },
        files: ["typed.ts"],
      }),
    );
    const tsc = join(root, "node_modules", "typescript", "bin", "tsc");
    execFileSync(process.execPath, [tsc, "-p", "."], { cwd: app, stdio: ["ignore", "inherit", "inherit"] });
  } finally {
    await weftd.stop();
    rmSync(work, { recursive: true, force: true });
  }
});
