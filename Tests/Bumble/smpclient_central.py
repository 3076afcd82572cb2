#!/usr/bin/env python3
"""smpclient's Bumble transport (an independent LE central and SMP client) doing SMP over a
controller of Tests/Bumble/rig.py, for tests.

Usage: smpclient_central.py --hci tcp-client:127.0.0.1:PORT --name NAME STEP...
  STEP: echo:TEXT | images | upload:FILE (image 0, into its secondary slot) | hold (keep the
        connection until killed, at most 600 s: a test's link loss)

Connects to the peripheral advertising NAME, runs the steps in order over one connection and
prints one JSON object per step on standard output: {"step": "echo", "text": ...},
{"step": "images", "images": [{"slot", "version", "hash" (hex), "pending", "confirmed",
"active"}]}, {"step": "upload", "bytes": N, "seconds": S}. A failure prints
{"error": "..."} and exits 1.
"""

import argparse
import asyncio
import json
import sys
import time

from smpclient import SMPClient
from smpclient.requests.image_management import ImageStatesRead
from smpclient.requests.os_management import EchoWrite
from smpclient.transport.bumble import SMPBumbleTransport


async def run(hci: str, name: str, steps: list[str]) -> None:
    async with SMPClient(SMPBumbleTransport(hci=hci), name) as client:
        for step in steps:
            verb, _, argument = step.partition(":")
            if verb == "echo":
                answer = await client.request(EchoWrite(d=argument))
                print(json.dumps({"step": "echo", "text": answer.r}), flush=True)
            elif verb == "images":
                answer = await client.request(ImageStatesRead())
                images = [
                    {
                        "slot": image.slot,
                        "version": image.version,
                        "hash": image.hash.hex() if image.hash else None,
                        "pending": image.pending,
                        "confirmed": image.confirmed,
                        "active": image.active,
                    }
                    for image in answer.images
                ]
                print(json.dumps({"step": "images", "images": images}), flush=True)
            elif verb == "upload":
                with open(argument, "rb") as file:
                    image = file.read()
                start = time.monotonic()
                async for _ in client.upload(image):
                    pass
                elapsed = time.monotonic() - start
                print(json.dumps({"step": "upload", "bytes": len(image), "seconds": elapsed}), flush=True)
            elif verb == "hold":
                await asyncio.sleep(600)
            else:
                raise ValueError(f"unknown step '{step}'")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hci", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("steps", nargs="+")
    arguments = parser.parse_args()
    try:
        asyncio.run(run(arguments.hci, arguments.name, arguments.steps))
    except Exception as error:  # one line for the test, whatever failed
        print(json.dumps({"error": f"{type(error).__name__}: {error}"}), flush=True)
        sys.exit(1)


if __name__ == "__main__":
    main()
