"""The wheel `make python-build` makes, installed offline into a fresh virtual
environment, runs the quickstart: examples/python/worker.py from that
environment works the example workflow to COMPLETED."""

import glob
import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

import weft
from weft.v1 import run_pb2
from support import ROOT, step, until, weft_cli


def _wheel() -> str:
    d = os.environ.get("WEFT_WHEEL_DIR")
    if not d:
        d = tempfile.mkdtemp(prefix="weft-wheel-")
        subprocess.run(["/usr/bin/python3", "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "--no-index",
                        "-q", "-w", d, str(ROOT / "client" / "python")], check=True)
    wheels = glob.glob(os.path.join(d, "weft_client-*.whl"))
    assert len(wheels) == 1, f"want one wheel in {d}, found {wheels}"
    return wheels[0]


@pytest.fixture()
def venv():
    d = tempfile.mkdtemp(prefix="weft-venv-")
    # --system-site-packages: the dependencies are Debian's (python3-protobuf, python3-httpx).
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--system-site-packages", d], check=True)
    py = os.path.join(d, "bin", "python")
    subprocess.run([py, "-m", "pip", "install", "-q", "--no-index", "--no-deps", _wheel()], check=True)
    yield py
    shutil.rmtree(d, ignore_errors=True)


def test_the_wheel_installed_into_a_fresh_venv_runs_the_quickstart_to_completed(weftd, venv, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run([venv, "-c", "import weft, weft.worker; print(weft.__file__)"], cwd=tmp_path, env=env,
                           capture_output=True, text=True, check=True).stdout.strip()
    assert where.startswith(os.path.dirname(os.path.dirname(venv))), f"weft imported from {where}"
    worker = subprocess.Popen([venv, str(ROOT / "examples" / "python" / "worker.py")], cwd=tmp_path,
                              env={**env, "WEFT_URL": weftd.url}, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                              text=True)
    try:
        out = subprocess.run([weft_cli(), "submit", "--start", "--quiet", str(ROOT / "examples" / "workflow.yaml")],
                             env={**env, "WEFT_URL": weftd.url}, capture_output=True, text=True, check=True)
        run_id = out.stdout.strip()
        with weft.Client(weftd.url) as c:
            def waiting(action):
                r = c.runs.get_run(run_id=run_id).run
                s = step(r, action)
                return r if s.status in (run_pb2.STEP_STATUS_WAITING_FOR_SIGNAL,
                                         run_pb2.STEP_STATUS_WAITING_FOR_MANUAL_COMPLETION) else None

            until("payment-confirmed to wait for its signal", lambda: waiting("payment-confirmed"))
            c.signal_run(run_id, "payment-confirmed", {"reference": "PAY-42"})
            r = until("approve-shipment to wait for a person", lambda: waiting("approve-shipment"))
            c.complete_manual_action(run_id, "approve-shipment", step(r, "approve-shipment").completion_token,
                                     "alice", notes="stock checked")
            done = c.await_run(run_id, timeout=60)
        assert done.status == run_pb2.RUN_STATUS_COMPLETED, done.message
        ship = weft.from_value(step(done, "ship").output)
        assert ship["carrier"] == "post" and ship["tracking"].startswith("trk-")
    finally:
        worker.terminate()
        _, err = worker.communicate(timeout=30)
    assert worker.returncode == 0, err
    assert "worker stopped" in err
