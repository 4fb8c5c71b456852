"""The Python side of the worker benchmark (steps.py): the asyncio worker
runtime with one no-op activity, until SIGTERM.

    python3 pyworker.py URL ACTIVITY CONCURRENCY
"""

import asyncio
import os
import sys

import weft
from weft.worker import Worker


async def main(url: str, activity: str, concurrency: int) -> None:
    async with weft.AsyncClient(url, http2=os.environ.get("WEFT_BENCH_HTTP2") == "1") as client:
        worker = Worker(client, worker_id="py-bench", concurrency=concurrency, poll_wait=5.0, heartbeat_interval=0)

        @worker.activity(activity)
        async def noop(_):
            return None

        await worker.run()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2], int(sys.argv[3])))
