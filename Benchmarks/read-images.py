#!/usr/bin/env python3
"""Reads every device's image list with smpclient, a client independent of mcumgr.

For each `udp://HOST:PORT NAME` line of an inventory (the lines `mcumgr simulator` prints and
`mcumgr fleet upgrade --inventory` reads; blank lines and lines starting with # are skipped), it
connects with smpclient's UDP transport, sends one image state read (group 1, command 0) and
records every slot: image, slot, version, hash and the active, confirmed, pending and permanent
flags. It then prints how many devices run the expected version active and confirmed, and one
line for every device that does not (what it runs instead, or why it did not answer).

A device counts when its image list has a slot with the expected version (1.2.3+4 and 1.2.3.4 are
the same version; a missing build number is 0) that is both active and confirmed, and, with
--image, whose hash is the SHA-256 of that image file (its MCUboot SHA256 TLV).

    Benchmarks/read-images.py INVENTORY --expect 1.2.3+4 [--image app.signed.bin]
        [--concurrency 16] [--timeout 3] [--attempts 2] [--json OUT]

Exit status: 0 when every device counts, 1 when some do not, 2 on a usage or input error.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import struct
import sys
import time
from dataclasses import asdict, dataclass, field
from importlib.metadata import version as package_version
from urllib.parse import urlsplit

from smpclient import SMPClient
from smpclient.exceptions import SMPClientException
from smpclient.generics import error, success
from smpclient.requests.image_management import ImageStatesRead
from smpclient.transport.udp import SMPUDPTransport


class PortUDPTransport(SMPUDPTransport):
    """smpclient's UDP transport bound to one port (SMPClient.connect passes only a host)."""

    def __init__(self, port: int) -> None:
        super().__init__()
        self._port = port

    async def connect(self, address: str, timeout_s: float, port: int | None = None) -> None:
        await super().connect(address, timeout_s, self._port if port is None else port)


@dataclass
class Device:
    name: str
    url: str
    host: str
    port: int
    slots: list[dict] = field(default_factory=list)
    problem: str | None = None
    counts: bool = False
    seconds: float = 0.0


def version_key(text: str) -> tuple[int, int, int, int]:
    """1.2.3+4, 1.2.3.4 and 1.2.3 (build 0) as a comparable tuple."""
    parts = text.replace("+", ".").split(".")
    numbers = [int(part) for part in parts]
    if not 1 <= len(numbers) <= 4:
        raise ValueError(f"not a version: {text!r}")
    numbers += [0] * (4 - len(numbers))
    return (numbers[0], numbers[1], numbers[2], numbers[3])


def image_hash(path: str) -> bytes:
    """The SHA256 TLV (type 0x10) of an MCUboot image file."""
    data = open(path, "rb").read()
    magic, _, header_size, _, image_size = struct.unpack_from("<IIHHI", data, 0)
    if magic != 0x96F3B83D:
        raise ValueError(f"{path}: not an MCUboot image (magic 0x{magic:08x})")
    offset = header_size + image_size
    while offset + 4 <= len(data):
        info_magic, total = struct.unpack_from("<HH", data, offset)
        if info_magic not in (0x6907, 0x6908):
            break
        end = offset + total
        entry = offset + 4
        while entry + 4 <= end:
            kind, length = struct.unpack_from("<HH", data, entry)
            if kind == 0x10 and info_magic == 0x6907:
                return data[entry + 4 : entry + 4 + length]
            entry += 4 + length
        offset = end
    raise ValueError(f"{path}: no SHA256 TLV")


def read_inventory(path: str) -> list[Device]:
    devices = []
    with open(path, encoding="utf-8") as lines:
        for number, line in enumerate(lines, 1):
            words = line.split()
            if not words or words[0].startswith("#"):
                continue
            url = urlsplit(words[0])
            if url.scheme != "udp" or not url.hostname or url.port is None:
                raise ValueError(f"{path}:{number}: not a udp://HOST:PORT line: {line.strip()!r}")
            name = words[1] if len(words) > 1 else words[0]
            devices.append(Device(name=name, url=words[0], host=url.hostname, port=url.port))
    return devices


async def read_once(device: Device, timeout: float) -> None:
    client = SMPClient(PortUDPTransport(device.port), device.host, timeout_s=timeout)
    await client.connect()
    try:
        response = await client.request(ImageStatesRead(), timeout_s=timeout)
    finally:
        await client.disconnect()
    if error(response):
        device.problem = f"image state read refused: {response}"
        return
    if not success(response):
        device.problem = f"unexpected answer: {response!r}"
        return
    device.problem = None
    device.slots = [
        {
            "image": slot.image if slot.image is not None else 0,
            "slot": slot.slot,
            "version": slot.version,
            "hash": bytes(slot.hash).hex() if slot.hash is not None else None,
            "active": bool(slot.active),
            "confirmed": bool(slot.confirmed),
            "pending": bool(slot.pending),
            "permanent": bool(slot.permanent),
        }
        for slot in response.images
    ]


async def read_device(
    device: Device, gate: asyncio.Semaphore, timeout: float, attempts: int
) -> None:
    async with gate:
        start = time.monotonic()
        for attempt in range(1, attempts + 1):
            try:
                await asyncio.wait_for(read_once(device, timeout), timeout * 3)
                if device.problem is None:
                    break
            except (TimeoutError, asyncio.TimeoutError):
                device.problem = f"no answer within {timeout:g} s ({attempt} attempt(s))"
            except (OSError, SMPClientException) as failure:
                device.problem = f"{type(failure).__name__}: {failure}"
            except Exception as failure:  # a malformed answer: say so, go on with the others
                device.problem = f"{type(failure).__name__}: {failure}"
        device.seconds = time.monotonic() - start


def describe(slots: list[dict]) -> str:
    if not slots:
        return "no slots"
    parts = []
    for slot in slots:
        flags = [name for name in ("active", "confirmed", "pending", "permanent") if slot[name]]
        parts.append(
            f"image {slot['image']} slot {slot['slot']} {slot['version']}"
            + (f" ({', '.join(flags)})" if flags else "")
        )
    return "; ".join(parts)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("inventory", help="file of `udp://HOST:PORT NAME` lines")
    parser.add_argument("--expect", required=True, help="the version that must run, e.g. 1.2.3+4")
    parser.add_argument("--image", help="the image file; its SHA-256 must match the slot's hash")
    parser.add_argument("--concurrency", type=int, default=16, help="devices read at once")
    parser.add_argument("--timeout", type=float, default=3.0, help="seconds per request")
    parser.add_argument("--attempts", type=int, default=2, help="tries per device")
    parser.add_argument("--json", help="write every device's slots to this file")
    arguments = parser.parse_args()
    logging.getLogger("smpclient").setLevel(logging.CRITICAL)

    try:
        expected = version_key(arguments.expect)
        expected_hash = image_hash(arguments.image).hex() if arguments.image else None
        devices = read_inventory(arguments.inventory)
    except (OSError, ValueError) as problem:
        print(f"read-images: {problem}", file=sys.stderr)
        return 2
    if not devices:
        print(f"read-images: {arguments.inventory}: no devices", file=sys.stderr)
        return 2
    if arguments.concurrency < 1 or arguments.attempts < 1 or arguments.timeout <= 0:
        print("read-images: --concurrency, --attempts and --timeout must be positive", file=sys.stderr)
        return 2

    async def read_all() -> None:
        gate = asyncio.Semaphore(arguments.concurrency)
        await asyncio.gather(
            *(read_device(d, gate, arguments.timeout, arguments.attempts) for d in devices)
        )

    start = time.monotonic()
    asyncio.run(read_all())
    elapsed = time.monotonic() - start

    others = []
    for device in devices:
        if device.problem is None:
            for slot in device.slots:
                try:
                    same_version = version_key(slot["version"]) == expected
                except ValueError:
                    same_version = False
                if (
                    same_version
                    and slot["active"]
                    and slot["confirmed"]
                    and (expected_hash is None or slot["hash"] == expected_hash)
                ):
                    device.counts = True
        if not device.counts:
            others.append(device)

    counted = len(devices) - len(others)
    checked = "version and hash" if expected_hash else "version"
    print(
        f"{counted} of {len(devices)} run {arguments.expect}, active and confirmed "
        f"(image lists read by smpclient {package_version('smpclient')}, {checked} checked, "
        f"{elapsed:.1f} s, {arguments.concurrency} at a time)"
    )
    for device in others:
        reason = device.problem or describe(device.slots)
        print(f"  not counted: {device.name} {device.url}: {reason}")
    if arguments.json:
        with open(arguments.json, "w", encoding="utf-8") as out:
            json.dump([asdict(device) for device in devices], out, indent=1)
    return 0 if not others else 1


if __name__ == "__main__":
    sys.exit(main())
