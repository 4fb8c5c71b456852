// A real weftd for the Node tests: the binary named by WEFT_WEFTD (make
// test-ts builds it), else built here with `go build`; embedded store in a
// fresh temporary directory, a free loopback port, stopped with SIGTERM.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync, existsSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { createInterface } from "node:readline";

/** A weftd process started by a test. */
export interface Weftd {
  /** e.g. "http://127.0.0.1:41234". */
  readonly url: string;
  /** Everything weftd logged so far. */
  logs(): string;
  /** Stops weftd with SIGTERM and removes its data directory; resolves with its exit code. */
  stop(): Promise<number | null>;
}

/** The repository's root (tests run from client/ts/dist-test/). */
export function repoRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  while (!existsSync(join(dir, "go.mod"))) {
    const up = dirname(dir);
    if (up === dir) throw new Error("the repository root (go.mod) was not found above the tests");
    dir = up;
  }
  return dir;
}

let built: string | undefined;

/** weftdBinary answers WEFT_WEFTD, or builds weftd once into a temporary directory. */
export function weftdBinary(): string {
  if (process.env.WEFT_WEFTD) return resolve(process.env.WEFT_WEFTD);
  if (!built) {
    const out = join(mkdtempSync(join(tmpdir(), "weftd-bin-")), "weftd");
    execFileSync("go", ["build", "-o", out, "./cmd/weftd"], { cwd: repoRoot(), stdio: "inherit" });
    built = out;
  }
  return built;
}

/** startWeftd starts weftd (embedded, temp dir, free port) with any extra flags and environment variables. */
export async function startWeftd(extra: string[] = [], env: Record<string, string> = {}): Promise<Weftd> {
  const dir = mkdtempSync(join(tmpdir(), "weftd-ts-"));
  const child: ChildProcess = spawn(weftdBinary(), ["--addr", "127.0.0.1:0", "--data-dir", dir, "--log-level", "info", ...extra], {
    stdio: ["ignore", "ignore", "pipe"],
    env: { ...process.env, GOGC: process.env.GOGC ?? "200", ...env },
  });
  let log = "";
  const exited = new Promise<number | null>((res) => child.once("exit", (code) => res(code)));
  const addr = await new Promise<string>((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`weftd did not report listening within 30 s:\n${log}`)), 30000);
    createInterface({ input: child.stderr! }).on("line", (line) => {
      log += line + "\n";
      try {
        const entry = JSON.parse(line) as { msg?: string; addr?: string };
        if (entry.msg === "weftd listening" && entry.addr) {
          clearTimeout(timer);
          res(entry.addr);
        }
      } catch {
        // not a JSON line
      }
    });
    child.once("exit", (code) => {
      clearTimeout(timer);
      rej(new Error(`weftd exited (${code}) before listening:\n${log}`));
    });
  });
  const port = addr.slice(addr.lastIndexOf(":") + 1);
  let stopped: Promise<number | null> | undefined;
  return {
    url: `http://127.0.0.1:${port}`,
    logs: () => log,
    stop() {
      stopped ??= (async () => {
        if (child.exitCode === null) child.kill("SIGTERM");
        const code = await exited;
        rmSync(dir, { recursive: true, force: true });
        return code;
      })();
      return stopped;
    },
  };
}

/** until polls check every intervalMs until it answers a value, or throws after timeoutMs with what. */
export async function until<T>(what: string | (() => string), check: () => Promise<T | undefined | false>, timeoutMs = 20000, intervalMs = 50): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${typeof what === "string" ? what : what()}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}
