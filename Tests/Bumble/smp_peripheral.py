#!/usr/bin/env python3
"""An SMP peripheral with Bumble's own LE host (an independent stack), for tests: it advertises
the SMP service on a controller of Tests/Bumble/rig.py and forwards each SMP frame a central
writes to an SMP server over UDP (our simulator), notifying the answers back.

Usage: smp_peripheral.py --hci tcp-client:127.0.0.1:PORT --name NAME --udp PORT [--address ADDR]
                         [--lifetime SECONDS]

It behaves as Zephyr's SMP server over BLE was seen to (shared reference hci-bumble.md): name and
the 128-bit SMP service UUID in the advertising data, connectable, one connection at a time,
advertising again after a disconnect; the SMP characteristic takes writes without response and
notifies; a frame may span many writes (reassembled by the SMP header's length) and an answer
longer than one notification goes out split. The ATT MTU it grants is at most 498.

Prints one JSON line, {"advertising": NAME, "address": ADDR}, once it advertises; runs until it is
stopped (SIGTERM), its parent is gone or the lifetime passes. One line on standard error per connection and
disconnection (with the reason), which tests read.
"""

import argparse
import asyncio
import json
import logging
import sys
import uuid

from bumble.device import Device
from bumble.gatt import Characteristic, CharacteristicValue, Service
from bumble.hci import Address
from bumble.transport import open_transport
from lifetime import until_orphaned

SMP_SERVICE = "8D53DC1D-1DB7-4CD3-868B-8A527460AA84"
SMP_CHARACTERISTIC = "DA2E7828-FBCE-4E01-AE9E-261174997C48"
SMP_HEADER = 8
MAX_MTU = 498


def advertising_data(name: str) -> bytes:
    """Flags (LE general discoverable, no BR/EDR), the complete name and the SMP service UUID."""
    encoded = name.encode()
    service = uuid.UUID(SMP_SERVICE).bytes[::-1]  # AD carries UUIDs little-endian
    data = bytes([2, 0x01, 0x06]) + bytes([len(encoded) + 1, 0x09]) + encoded + bytes([17, 0x07]) + service
    if len(data) > 31:
        raise SystemExit(f"name '{name}' too long for legacy advertising data with the SMP UUID (31 bytes)")
    return data


class UDPAnswers(asyncio.DatagramProtocol):
    """The SMP server's answers, handed to the peripheral."""

    def __init__(self, peripheral: "Peripheral") -> None:
        self.peripheral = peripheral

    def datagram_received(self, data: bytes, addr) -> None:
        self.peripheral.answer(data)


class Peripheral:
    def __init__(self, device: Device, udp_port: int) -> None:
        self.device = device
        self.udp_port = udp_port
        self.pending = bytearray()
        self.connection = None
        self.udp = None
        self.characteristic = Characteristic(
            SMP_CHARACTERISTIC,
            Characteristic.Properties.WRITE_WITHOUT_RESPONSE | Characteristic.Properties.NOTIFY,
            Characteristic.WRITEABLE,
            CharacteristicValue(write=self.on_write),
        )
        device.add_service(Service(SMP_SERVICE, [self.characteristic]))
        device.gatt_server.max_mtu = MAX_MTU
        device.on("connection", self.on_connection)

    async def open_udp(self) -> None:
        loop = asyncio.get_running_loop()
        self.udp, _ = await loop.create_datagram_endpoint(
            lambda: UDPAnswers(self), remote_addr=("127.0.0.1", self.udp_port)
        )

    def on_connection(self, connection) -> None:
        self.connection = connection
        self.pending.clear()
        print(f"peripheral: connected to {connection.peer_address}", file=sys.stderr, flush=True)

        def on_disconnection(reason) -> None:
            print(f"peripheral: disconnected, reason 0x{reason:02X}", file=sys.stderr, flush=True)
            self.connection = None
            self.pending.clear()

        connection.on("disconnection", on_disconnection)

    def on_write(self, connection, value: bytes) -> None:
        self.pending += value
        while len(self.pending) >= SMP_HEADER:
            length = SMP_HEADER + int.from_bytes(self.pending[2:4], "big")
            if len(self.pending) < length:
                return
            frame, self.pending = bytes(self.pending[:length]), self.pending[length:]
            if self.udp is not None:
                self.udp.sendto(frame)

    def answer(self, frame: bytes) -> None:
        connection = self.connection
        if connection is None:
            return  # the central is gone: its answer is lost, as over the air
        asyncio.ensure_future(self.notify(connection, frame))

    async def notify(self, connection, frame: bytes) -> None:
        size = connection.att_mtu - 3
        for start in range(0, len(frame), size):
            try:
                await self.device.notify_subscriber(connection, self.characteristic, frame[start : start + size])
            except Exception as error:  # the link dropped mid-answer
                print(f"peripheral: notification failed: {error}", file=sys.stderr, flush=True)
                return



async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hci", required=True)
    parser.add_argument("--name", required=True)
    parser.add_argument("--udp", type=int, required=True)
    parser.add_argument("--address", default="C0:00:00:00:00:01")
    parser.add_argument("--lifetime", type=float, default=900.0)
    arguments = parser.parse_args()
    data = advertising_data(arguments.name)

    async with await open_transport(arguments.hci) as transport:
        device = Device.with_hci(
            arguments.name, Address(arguments.address, Address.RANDOM_DEVICE_ADDRESS), transport.source, transport.sink
        )
        peripheral = Peripheral(device, arguments.udp)
        await peripheral.open_udp()
        await device.power_on()
        await device.start_advertising(auto_restart=True, advertising_data=data, scan_response_data=data)
        print(json.dumps({"advertising": arguments.name, "address": arguments.address}), flush=True)
        await until_orphaned(arguments.lifetime)


if __name__ == "__main__":
    logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="peripheral: %(message)s")
    asyncio.run(main())
