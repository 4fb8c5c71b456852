"""The example workflow's worker in Python: the same activities and
compensations as the Go worker (examples/worker) and the TypeScript one
(examples/ts), run by the weft-client package's asyncio worker runtime.

    make py-worker          # or: PYTHONPATH=client/python/src /usr/bin/python3 examples/python/worker.py

The address is $WEFT_URL (default http://127.0.0.1:7400), the bearer token
$WEFT_TOKEN, the queue $WEFT_QUEUE (default "default"); with an https:// address,
$WEFT_CA_CERT, $WEFT_CLIENT_CERT and $WEFT_CLIENT_KEY name a private CA and a
client certificate, as for the CLI. On SIGINT or SIGTERM it
stops polling and lets in-flight tasks finish and report.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
from dataclasses import dataclass
from typing import Optional

import weft
from weft.worker import INDETERMINATE, ActivityContext, ErrorClass, NonRetryable, VerifyResult, Worker


@dataclass
class Item:
    """What reserve-inventory reserves and release-inventory releases."""

    sku: str
    quantity: int


@dataclass
class Payment:
    """What charge-card charges and refund-card refunds."""

    amount_cents: int
    currency: str


@dataclass
class Shipment:
    """ship-order's input and output."""

    carrier: str
    tracking: Optional[str] = None


def say(msg: str, **fields: object) -> None:
    print(json.dumps({"msg": msg, **fields}), file=sys.stderr, flush=True)


client = weft.AsyncClient(os.environ.get("WEFT_URL") or "http://127.0.0.1:7400", token=os.environ.get("WEFT_TOKEN"),
                          tls=weft.TLS.from_env())
worker = Worker(client, queue=os.environ.get("WEFT_QUEUE") or "default")


def short_key(ctx: ActivityContext) -> str:
    # Every external call would pass ctx.info.idempotency_key, which is stable
    # across retries, so a retried attempt cannot act twice.
    return ctx.info.idempotency_key[:12]


@worker.activity("reserve-inventory")
async def reserve(item: Item, ctx: ActivityContext) -> dict:
    if item.quantity <= 0:
        raise NonRetryable("quantity must be positive", code="bad_quantity", error_class=ErrorClass.ERROR_CLASS_VALIDATION)
    say("reserved", run_id=ctx.info.run_id, sku=item.sku)
    return {"reservation_id": f"rsv-{short_key(ctx)}"}


@worker.activity("charge-card", idempotency_key=lambda p: f"charge-{p.amount_cents}-{p.currency}")
async def charge(payment: Payment, ctx: ActivityContext) -> dict:
    if not ctx.info.upstream_outputs.get("reserve"):
        raise NonRetryable("charge needs the reservation", code="no_reservation",
                           error_class=ErrorClass.ERROR_CLASS_VALIDATION)
    return {"charge_id": f"ch-{short_key(ctx)}"}


@charge.verify
async def charged(key: str, ctx: ActivityContext) -> VerifyResult:
    # A real verify asks the payment provider whether key was charged.
    return VerifyResult(INDETERMINATE, diagnostic="example: no provider to ask")


@worker.activity("ship-order")
def ship(shipment: Shipment, ctx: ActivityContext) -> Shipment:
    # A plain (non-async) function: the runtime runs it in a thread.
    shipment.tracking = f"trk-{short_key(ctx)}"
    return shipment


@worker.compensation("release-inventory")
async def release(item: Item, ctx: ActivityContext) -> None:
    say("released", run_id=ctx.info.run_id, sku=item.sku)


@worker.compensation("refund-card")
async def refund(payment: Payment, ctx: ActivityContext) -> None:
    say("refunded", run_id=ctx.info.run_id, cents=payment.amount_cents)


async def main() -> None:
    logging.basicConfig(level=logging.INFO, format="%(levelname)s %(name)s %(message)s")
    say("worker started", worker_id=worker.worker_id, queue=worker.queue)
    try:
        await worker.run()
    finally:
        await client.aclose()


if __name__ == "__main__":
    asyncio.run(main())
