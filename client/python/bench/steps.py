"""Steps per second of the Python worker runtime against the Go one on the
same kind of weftd: a fresh embedded weftd per round, R runs of S sequential
no-op steps submitted first, then one worker (C slots) started, timed from its
start until every run is COMPLETED, and the worker process's CPU time per step
(its start-up, about 0.6 s of imports for Python, included). Rounds alternate Go
and Python. WEFT_BENCH_HTTP2=1 runs the Python worker over HTTP/2.

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


def cpu_seconds(pid: int) -> float:
    """A process's user+system CPU time (/proc/PID/stat), in seconds."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def round_(kind: str, runs: int, steps: int, concurrency: int) -> tuple:
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
                cpu = cpu_seconds(w.pid)
            finally:
                w.send_signal(signal.SIGTERM)
                w.wait(30)
        return runs * steps / elapsed, cpu * 1000 / (runs * steps)
    finally:
        d.stop()


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--runs", type=int, default=200)
    p.add_argument("--steps", type=int, default=5)
    p.add_argument("--concurrency", type=int, default=16)
    p.add_argument("--rounds", type=int, default=3)
    a = p.parse_args()
    rates: dict = {"go": [], "python": []}
    cpus: dict = {"go": [], "python": []}
    for _ in range(a.rounds):
        for kind in ("go", "python"):
            rate, cpu = round_(kind, a.runs, a.steps, a.concurrency)
            rates[kind].append(rate)
            cpus[kind].append(cpu)
            print(f"{kind:6s} {rate:8.1f} steps/s  worker CPU {cpu:6.3f} ms/step", flush=True)
    median = {k: (sorted(rates[k])[len(rates[k]) // 2], sorted(cpus[k])[len(cpus[k]) // 2]) for k in rates}
    for kind, (rate, cpu) in median.items():
        print(f"{kind:6s} median {rate:8.1f} steps/s, worker CPU {cpu:6.3f} ms/step over {a.rounds} rounds "
              f"(runs={a.runs} steps={a.steps} concurrency={a.concurrency})")
    print(f"python/go: steps/s {median['python'][0] / median['go'][0]:.2f}, "
          f"worker CPU per step {median['python'][1] / median['go'][1]:.2f}")


if __name__ == "__main__":
    main()
