"""A Python worker in its own process, for the tests that freeze (SIGSTOP),
kill (SIGKILL) or stop (SIGTERM) a real worker. It prints one JSON line per
thing that happens, which the test reads. Configured by environment:
WEFT_URL, WORKER_ID, ACTIVITY, LEDGER (a directory), MODE:
  effect-then-hang   write the side effect to LEDGER, print "effect", hang until stopped
  hang               print "started", hang until stopped
  finish-on-release  print "started", finish once LEDGER/release exists
DETAILS (optional JSON) is sent with a heartbeat before "started".
"""

import asyncio
import json
import logging
import os
import sys
from dataclasses import dataclass
from pathlib import Path

import weft
from weft.worker import COMPLETED_WITH_RESULT, NOT_COMPLETED, ActivityContext, VerifyResult, Worker


def say(**what: object) -> None:
    sys.stdout.write(json.dumps(what) + "\n")
    sys.stdout.flush()


class SayHandler(logging.Handler):
    def emit(self, record: logging.LogRecord) -> None:
        say(log=record.getMessage())


@dataclass
class Charge:
    order_id: str
    cents: int


MODE = os.environ["MODE"]
LEDGER = Path(os.environ.get("LEDGER", "."))
client = weft.AsyncClient(os.environ["WEFT_URL"])
worker = Worker(client, worker_id=os.environ["WORKER_ID"], poll_wait=1.0, concurrency=2, shutdown_timeout=20)


async def hang(ctx: ActivityContext) -> None:
    try:
        await asyncio.Event().wait()
    except asyncio.CancelledError:
        say(aborted=ctx.cancel_reason)
        raise


verifiable = MODE == "effect-then-hang"


@worker.activity(os.environ["ACTIVITY"], idempotency_key=(lambda c: c.order_id) if verifiable else None)
async def charge(c: Charge, ctx: ActivityContext) -> dict:
    if os.environ.get("DETAILS"):
        assert await ctx.heartbeat(json.loads(os.environ["DETAILS"]))
    say(started=ctx.info.action_id, attempt=ctx.info.engine_attempt, run_id=ctx.info.run_id)
    if MODE == "effect-then-hang":
        (LEDGER / c.order_id).write_text(json.dumps({"receipt": f"R-{c.order_id}"}))
        say(effect=c.order_id)
        await hang(ctx)
    elif MODE == "finish-on-release":
        while not (LEDGER / "release").exists():
            await asyncio.sleep(0.02)
        say(finishing=ctx.info.run_id)
        return {"receipt": "drained"}
    await hang(ctx)
    return {}


if verifiable:

    @charge.verify
    def verify(key: str, ctx: ActivityContext) -> VerifyResult:
        f = LEDGER / key
        if not key or not f.exists():
            return VerifyResult(NOT_COMPLETED)
        return VerifyResult(COMPLETED_WITH_RESULT, result=json.loads(f.read_text()))


async def main() -> None:
    logging.getLogger("weft.worker").addHandler(SayHandler())
    logging.getLogger("weft.worker").setLevel(logging.INFO)
    say(ready=worker.worker_id)
    try:
        await worker.run()
    except Exception as e:
        say(stopped=repr(e))
        sys.exit(1)
    say(stopped="clean")


asyncio.run(main())
