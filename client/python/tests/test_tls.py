"""The clients over TLS against a real weftd serving a certificate a CA
made here (with the openssl CLI) signed, and asking for client certificates
of another CA made here (mutual TLS): sync and asyncio, HTTP/1.1 and HTTP/2;
refused without the CA, and unauthenticated without the client certificate.
The worker runtime takes the same options with its client."""

from __future__ import annotations

import asyncio
import subprocess
import tempfile
from pathlib import Path

import pytest

import weft
from weft.v1 import run_pb2
from weft.worker import Worker
from support import Weftd, unique

EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes"]


def _ssl(d: Path, *args: str) -> None:
    subprocess.run(["openssl", *args], cwd=d, check=True, capture_output=True)


def _ca(d: Path, name: str) -> None:
    _ssl(d, "req", "-x509", *EC, "-keyout", f"{name}.key", "-out", f"{name}.crt", "-subj", f"/CN={name}", "-days", "1")


def _signed(d: Path, name: str, subject: str, ca: str, ext: str) -> None:
    _ssl(d, "req", *EC, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", subject)
    (d / f"{name}.ext").write_text(ext)
    _ssl(d, "x509", "-req", "-in", f"{name}.csr", "-CA", f"{ca}.crt", "-CAkey", f"{ca}.key", "-CAcreateserial",
         "-out", f"{name}.crt", "-days", "1", "-extfile", f"{name}.ext")


@pytest.fixture(scope="module")
def certs() -> Path:
    d = Path(tempfile.mkdtemp(prefix="weft-py-tls-"))
    _ca(d, "server-ca")
    _signed(d, "server", "/CN=localhost", "server-ca", "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    _ca(d, "client-ca")
    _signed(d, "client", "/CN=py-worker/O=default/OU=admin/OU=worker", "client-ca", "extendedKeyUsage=clientAuth\n")
    return d


@pytest.fixture(scope="module")
def tls_weftd(certs: Path):
    d = Weftd("--tls-cert", str(certs / "server.crt"), "--tls-key", str(certs / "server.key"),
              "--tls-client-ca", str(certs / "client-ca.crt"))
    d.url = d.url.replace("http://", "https://")
    yield d
    d.stop()


def _mutual(certs: Path) -> weft.TLS:
    return weft.TLS(ca=str(certs / "server-ca.crt"), cert=str(certs / "client.crt"), key=str(certs / "client.key"))


@pytest.mark.parametrize("http2", [False, True], ids=["http1.1", "http2"])
def test_the_sync_client_reaches_weftd_over_mutual_TLS_with_a_private_CA(tls_weftd, certs, http2):
    with weft.Client(tls_weftd.url, http2=http2, tls=_mutual(certs)) as c:
        assert c.transport.http.get("/healthz").http_version == ("HTTP/2" if http2 else "HTTP/1.1")
        run = c.submit({"plan_id": unique("tls"), "plan_version": "1",
                        "actions": [{"id": "a", "order": 1, "activity": "nobody-runs-this"}]}).run
        assert c.runs.get_run(run_id=run.run_id).run.run_id == run.run_id


@pytest.mark.parametrize("http2", [False, True], ids=["http1.1", "http2"])
def test_the_async_client_reaches_weftd_over_mutual_TLS_with_a_private_CA(tls_weftd, certs, http2):
    async def main() -> None:
        async with weft.AsyncClient(tls_weftd.url, http2=http2, tls=_mutual(certs)) as c:
            assert (await c.transport.http.get("/healthz")).http_version == ("HTTP/2" if http2 else "HTTP/1.1")
            assert [r async for r in c.list_runs(page_size=1)] is not None

    asyncio.run(main())


@pytest.mark.parametrize("http2", [False, True], ids=["http1.1", "http2"])
def test_without_the_CA_weftds_certificate_is_refused(tls_weftd, certs, http2):
    with weft.Client(tls_weftd.url, http2=http2, tls=weft.TLS(cert=str(certs / "client.crt"),
                                                                 key=str(certs / "client.key"))) as c:
        with pytest.raises(weft.Unavailable) as e:
            c.runs.list_runs()
        assert e.value.is_network_error
        assert "CERTIFICATE_VERIFY_FAILED" in str(e.value)


def test_without_a_client_certificate_the_call_is_unauthenticated(tls_weftd, certs):
    with weft.Client(tls_weftd.url, tls=weft.TLS(ca=str(certs / "server-ca.crt"))) as c:
        with pytest.raises(weft.Unauthenticated):
            c.runs.list_runs()


def test_the_worker_runtime_runs_a_step_over_mutual_TLS(tls_weftd, certs):
    a = unique("tls-act")

    async def main() -> run_pb2.Run:
        async with weft.AsyncClient(tls_weftd.url, http2=True, tls=_mutual(certs)) as c:
            w = Worker(c, poll_wait=1.0)

            @w.activity(a)
            async def act(x: dict) -> dict:
                return {"got": x}

            running = asyncio.create_task(w.run(handle_signals=False))
            try:
                return await c.submit_and_await({"plan_id": unique("tls-run"), "plan_version": "1", "actions": [
                    {"id": "a", "order": 1, "activity": a, "input": {"n": 1}}]}, timeout=60)
            finally:
                w.shutdown()
                await running

    run = asyncio.run(main())
    assert run.status == run_pb2.RUN_STATUS_COMPLETED, run.message
    assert weft.from_value(run.steps[0].output) == {"got": {"n": 1}}


def test_TLS_options_name_the_field_that_is_wrong(tmp_path):
    with pytest.raises(ValueError, match="tls.ca: no file at"):
        weft.Client("https://127.0.0.1:1", tls=weft.TLS(ca=str(tmp_path / "missing.crt")))
    (tmp_path / "k.pem").write_text("x")
    with pytest.raises(ValueError, match="tls.key needs tls.cert"):
        weft.Client("https://127.0.0.1:1", tls=weft.TLS(key=str(tmp_path / "k.pem")))
    with pytest.raises(ValueError, match="tls needs an https:// base_url"):
        weft.AsyncClient("http://127.0.0.1:1", tls=weft.TLS())
    assert weft.TLS.from_env({}) is None
    assert weft.TLS.from_env({"WEFT_CA_CERT": "/ca.pem"}) == weft.TLS(ca="/ca.pem")
