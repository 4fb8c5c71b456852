"""Real processes for the tests: weftd (embedded, or on PostgreSQL + Redis),
the Go CLI, a Python worker in its own process, and a worker on a thread."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import tempfile
import threading
import time
import uuid
from pathlib import Path
from typing import Any, Callable, Optional

import weft
from weft.worker import Worker

ROOT = Path(__file__).resolve().parents[3]
PYTHON_SRC = ROOT / "client" / "python" / "src"

_built: dict[str, str] = {}


def go_binary(name: str, pkg: str, env_var: str) -> str:
    """The binary named by env_var, else built once with go build."""
    if os.environ.get(env_var):
        return os.environ[env_var]
    if name not in _built:
        out = Path(tempfile.mkdtemp(prefix="weft-py-bin-")) / name
        subprocess.run(["go", "build", "-o", str(out), pkg], cwd=ROOT, check=True)
        _built[name] = str(out)
    return _built[name]


def weftd_binary() -> str:
    return go_binary("weftd", "./cmd/weftd", "WEFT_WEFTD")


def weft_cli() -> str:
    return go_binary("weft", "./cmd/weft", "WEFT_CLI")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:10]}"


class Weftd:
    """A weftd process on a free loopback port, stopped with SIGTERM."""

    def __init__(self, *extra: str, env: Optional[dict] = None) -> None:
        self.dir = tempfile.mkdtemp(prefix="weftd-py-")
        self.proc = subprocess.Popen(
            [weftd_binary(), "--addr", "127.0.0.1:0", "--data-dir", self.dir, "--log-level", "info", *extra],
            stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})}, text=True,
        )
        self.log: list[str] = []
        addr = self._wait_listening()
        self.url = f"http://127.0.0.1:{addr.rsplit(':', 1)[1]}"
        threading.Thread(target=self._drain_log, daemon=True).start()

    def _wait_listening(self) -> str:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)
            try:
                entry = json.loads(line)
            except ValueError:
                continue
            if entry.get("msg") == "weftd listening" and entry.get("addr"):
                return entry["addr"]
        raise RuntimeError("weftd exited before listening:\n" + "".join(self.log))

    def _drain_log(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self.log.append(line)

    def stop(self) -> Optional[int]:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.proc.returncode


def until(what: str, check: Callable[[], Any], timeout: float = 30.0, interval: float = 0.05) -> Any:
    """Polls check until it answers something true; fails after timeout naming what."""
    deadline = time.monotonic() + timeout
    while True:
        v = check()
        if v:
            return v
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(interval)


class ThreadWorker:
    """A weft.worker.Worker on its own asyncio loop in a thread of the test process."""

    def __init__(self, url: str, register: Callable[[Worker], None], **options: Any) -> None:
        self._ready = threading.Event()
        self._url = url
        self._register = register
        self._options = options
        self.error: Optional[BaseException] = None
        self._thread = threading.Thread(target=self._main, daemon=True)
        self._thread.start()
        self._ready.wait(10)

    def _main(self) -> None:
        async def main() -> None:
            self.loop = asyncio.get_running_loop()
            client = weft.AsyncClient(self._url)
            self.worker = Worker(client, poll_wait=1.0, **self._options)
            self._register(self.worker)
            self._ready.set()
            try:
                await self.worker.run(handle_signals=False)
            finally:
                await client.aclose()

        try:
            asyncio.run(main())
        except BaseException as e:  # reported by stop()
            self.error = e
            self._ready.set()

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.worker.shutdown)
        self._thread.join(60)
        assert not self._thread.is_alive(), "the worker did not stop"
        if self.error is not None:
            raise self.error


class ChildWorker:
    """tests/child_worker.py in its own process; it prints one JSON line per event."""

    def __init__(self, url: str, **env: str) -> None:
        self.lines: list[dict] = []
        self.proc = subprocess.Popen(
            ["/usr/bin/python3", str(Path(__file__).parent / "child_worker.py")],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
            env={**os.environ, "PYTHONPATH": str(PYTHON_SRC), "WEFT_URL": url, **env},
        )
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            try:
                self.lines.append(json.loads(line))
            except ValueError:
                self.lines.append({"text": line.rstrip()})

    def wait_for(self, what: str, pred: Callable[[dict], bool], timeout: float = 30.0) -> dict:
        return until(f"the child worker to print {what} (it printed {self.lines})",
                     lambda: next((l for l in list(self.lines) if pred(l)), None), timeout)

    def kill(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGCONT)
            self.proc.kill()
        self.proc.wait()


def step(run: Any, action_id: str) -> Any:
    return next(s for s in run.steps if s.action_id == action_id)
