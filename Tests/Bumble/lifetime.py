"""How the test peers in this folder end by themselves: when the process that started them is
gone (a test run that was killed leaves nothing behind) or their lifetime is over."""

import asyncio
import os


async def until_orphaned(lifetime: float) -> None:
    """Returns when this process's parent has changed (it died and the process was adopted) or
    `lifetime` seconds have passed, whichever comes first."""
    parent = os.getppid()
    loop = asyncio.get_running_loop()
    deadline = loop.time() + lifetime
    while os.getppid() == parent and loop.time() < deadline:
        await asyncio.sleep(0.5)
