// Builds the console into dist/ (committed; weftd embeds it): src/main.tsx
// bundled and minified by esbuild into app.js, with preact, dagre, connect-web
// and the generated client vendored in; src/app.css and src/index.html copied.
// The output depends only on the sources and the pinned packages, so
// `make gen-check` can rebuild it and compare.
//
//   node console/build.mjs          build dist/
//   node console/build.mjs --test   bundle test/ into test-dist/ instead (not committed)
import * as esbuild from "esbuild";
import { copyFileSync, mkdirSync, rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));

// The generated client lives in client/ts/src/gen and imports
// @bufbuild/protobuf; resolve that from the console's own node_modules, so
// that one copy is bundled whatever client/ts installs.
const ownPackages = {
  name: "own-packages",
  setup(build) {
    build.onResolve({ filter: /^@bufbuild\/protobuf(\/.*)?$/ }, async (args) => {
      if (args.pluginData === "own") return undefined;
      return build.resolve(args.path, { kind: args.kind, resolveDir: here, pluginData: "own" });
    });
  },
};

async function buildDist() {
  const dist = join(here, "dist");
  rmSync(dist, { recursive: true, force: true });
  mkdirSync(dist, { recursive: true });
  await esbuild.build({
    entryPoints: [join(here, "src/main.tsx")],
    outfile: join(dist, "app.js"),
    bundle: true,
    minify: true,
    format: "esm",
    platform: "browser",
    target: "es2022",
    jsx: "automatic",
    jsxImportSource: "preact",
    legalComments: "none",
    charset: "utf8",
    logLevel: "warning",
    plugins: [ownPackages],
  });
  await esbuild.build({
    entryPoints: [join(here, "src/app.css")],
    outfile: join(dist, "app.css"),
    bundle: true,
    minify: true,
    logLevel: "warning",
  });
  copyFileSync(join(here, "src/index.html"), join(dist, "index.html"));
}

async function buildTests() {
  const out = join(here, "test-dist");
  rmSync(out, { recursive: true, force: true });
  await esbuild.build({
    entryPoints: [join(here, "test/e2e.ts"), join(here, "test/signin.ts"), join(here, "test/feed.test.ts"), join(here, "test/dag.test.ts"), join(here, "test/jsoncheck.test.ts"), join(here, "test/filters.test.ts"), join(here, "test/yamlpath.test.ts"), join(here, "test/operate.ts"), join(here, "test/queues.ts"), join(here, "test/subworkflow.ts"), join(here, "test/fanout.test.ts"), join(here, "test/foreach.ts"), join(here, "test/concurrency.ts"), join(here, "test/fairness.ts")],
    outdir: out,
    bundle: true,
    format: "esm",
    platform: "node",
    target: "node20",
    packages: "external",
    outExtension: { ".js": ".mjs" },
    logLevel: "warning",
    plugins: [ownPackages],
  });
}

await (process.argv.includes("--test") ? buildTests() : buildDist());
