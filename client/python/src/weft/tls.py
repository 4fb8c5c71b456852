"""TLS for the clients: the CA that signed weftd's certificate (a private
CA), and a client certificate for mutual TLS (docs/security.md). Both the
sync and the asyncio client take ``tls=TLS(...)`` with an ``https://``
address, over HTTP/1.1 or HTTP/2 (ALPN); the worker runtime takes them with
its client."""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Optional


@dataclass(frozen=True)
class TLS:
    """Where the PEM files are.

    Args:
        ca: the CA certificate(s) that signed weftd's certificate; None:
            the system's trust store.
        cert: a client certificate (chain) for mutual TLS: weftd started
            with ``--tls-client-ca`` maps its CN to the principal, its O to
            the tenant and its OUs to roles.
        key: the client certificate's private key; None: it is in ``cert``'s file.
    """

    ca: Optional[str] = None
    cert: Optional[str] = None
    key: Optional[str] = None

    @classmethod
    def from_env(cls, env: Mapping[str, str] = os.environ) -> Optional["TLS"]:
        """The CLI's variables: WEFT_CA_CERT, WEFT_CLIENT_CERT, WEFT_CLIENT_KEY;
        None when none is set."""
        ca, cert, key = (env.get(k) or None for k in ("WEFT_CA_CERT", "WEFT_CLIENT_CERT", "WEFT_CLIENT_KEY"))
        if ca is None and cert is None and key is None:
            return None
        return cls(ca=ca, cert=cert, key=key)

    def httpx_options(self) -> dict[str, Any]:
        """httpx's ``verify`` and ``cert`` for these files (httpx builds the
        SSL context and offers ALPN ``h2`` when HTTP/2 is asked for). Raises
        ValueError naming the field of a file that is missing, or a key
        without its certificate."""
        for field, path in (("ca", self.ca), ("cert", self.cert), ("key", self.key)):
            if path is not None and not Path(path).is_file():
                raise ValueError(f"tls.{field}: no file at {path}")
        if self.key is not None and self.cert is None:
            raise ValueError("tls.key needs tls.cert: the key of which certificate?")
        cert: Any = None
        if self.cert is not None:
            cert = (self.cert, self.key) if self.key is not None else self.cert
        return {"verify": self.ca if self.ca is not None else True, "cert": cert}


def check_scheme(base_url: str, tls: Optional[TLS]) -> None:
    """Refuses TLS options with an address that is not https://."""
    if tls is not None and not base_url.lower().startswith("https://"):
        raise ValueError(f"tls needs an https:// base_url, got {base_url!r}")
