"""A real HTTP/1.1 proxy in front of weftd that loses answers: it forwards a
request whose path ends with a given method to weftd (so it takes effect),
then closes the connection without answering, the first ``drops`` times. That
is the network fault that makes a caller retry; nothing is mocked. It also
records each call's method and traceparent header (``calls``)."""

from __future__ import annotations

import http.client
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlparse


class LossyProxy:
    def __init__(self, upstream: str, method: str, drops: int = 1) -> None:
        self.upstream = urlparse(upstream)
        self.method = method
        self.drops = drops
        self.seen = 0
        #: (method, traceparent header or "") of every call forwarded, in order.
        self.calls: list[tuple[str, str]] = []
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("content-length") or 0))
                proxy.calls.append((self.path.rsplit("/", 1)[-1], self.headers.get("traceparent") or ""))
                conn = http.client.HTTPConnection(proxy.upstream.hostname, proxy.upstream.port, timeout=60)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                conn.request("POST", self.path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                conn.close()
                if self.path.endswith("/" + proxy.method):
                    proxy.seen += 1
                    if proxy.seen <= proxy.drops:
                        self.close_connection = True  # the answer is lost
                        return
                self.send_response(resp.status)
                for k, v in resp.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("content-length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()
