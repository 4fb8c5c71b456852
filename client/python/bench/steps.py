"""Steps per second of the Python worker runtime against the Go one on the
same kind of weftd: a fresh embedded weftd per round, R runs of S sequential
no-op steps submitted first, then one worker (C slots) started, timed from its
start until every run is COMPLETED. Rounds alternate Go and Python.

    make python-bench     # or: python3 steps.py --runs 200 --steps 5 --concurrency 16 --rounds 3
"""

import argparse
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE.parent / "src"), str(HERE.parent / "tests")]

import weft  # noqa: E402
from support import ROOT, Weftd, go_binary  # noqa: E402
from weft.v1 import run_pb2  # noqa: E402


def worker_cmd(kind: str, url: str, concurrency: int) -> list:
    if kind == "go":
        return [go_binary("goworker", "./client/python/bench/goworker", "WEFT_GOWORKER"),
                "-url", url, "-activity", "noop", "-concurrency", str(concurrency)]
    return ["/usr/bin/python3", str(HERE / "pyworker.py"), url, "noop", str(concurrency)]


def round_(kind: str, runs: int, steps: int, concurrency: int) -> float:
    d = Weftd()
    try:
        with weft.Client(d.url) as c:
            definition = {"plan_id": "bench", "plan_version": "1",
                          "actions": [{"id": f"s{i}", "order": i + 1, "activity": "noop"} for i in range(steps)]}
            ids = [c.submit(definition).run.run_id for _ in range(runs)]
            env = {**os.environ, "PYTHONPATH": str(HERE.parent / "src")}
            t0 = time.monotonic()
            w = subprocess.Popen(worker_cmd(kind, d.url, concurrency), env=env,
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            try:
                for run_id in ids:
                    run = c.await_run(run_id, timeout=600)
                    assert run.status == run_pb2.RUN_STATUS_COMPLETED, run.message
                elapsed = time.monotonic() - t0
            finally:
                w.send_signal(signal.SIGTERM)
                w.wait(30)
        return runs * steps / elapsed
    finally:
        d.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    results: dict = {"go": [], "python": []}
    for _ in range(a.rounds):
        for kind in ("go", "python"):
            results[kind].append(round_(kind, a.runs, a.steps, a.concurrency))
            print(f"{kind:6s} {results[kind][-1]:8.1f} steps/s", flush=True)
    for kind, xs in results.items():
        xs.sort()
        print(f"{kind:6s} median {xs[len(xs) // 2]:8.1f} steps/s over {len(xs)} rounds "
              f"(runs={a.runs} steps={a.steps} concurrency={a.concurrency})")
    print(f"python/go {sorted(results['python'])[len(xs) // 2] / sorted(results['go'])[len(xs) // 2]:.2f}")


if __name__ == "__main__":
    main()
