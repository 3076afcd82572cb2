#!/usr/bin/env python3
"""Virtual Bluetooth LE controllers for tests: Bumble's `Controller`s on one `LocalLink`, each
served to one host at a time as HCI H4 over TCP on 127.0.0.1.

Usage: rig.py [--chips N] [--lifetime SECONDS]

Prints one JSON line, {"ports": [P1, P2, ...]}, once every port listens; then serves until it is
stopped (SIGTERM), its parent is gone or the lifetime passes, so it never outlives its test.

Each port is one chip. A host that connects gets a fresh controller, as a power-cycled chip would
be: Bumble's controller keeps its links and advertising when its host goes away, and HCI Reset
clears neither (docs: shared reference hci-bumble.md). When the host's socket closes, the rig
ends that controller's links toward their peers with reason 0x08 (connection timeout), stops its
advertising and takes it off the link, so the other side sees a link loss — what a radio shows
when a device loses power. A second host on a chip that already has one is refused (closed at
once): a chip has one host. The chips' public addresses are F0:00:00:00:00:NN, NN the chip's
number from 1; hosts usually advertise and connect with a random address of their own.
"""

import argparse
import asyncio
import json
import logging
import sys

from bumble import ll
from bumble.controller import Controller
from bumble.link import LocalLink
from bumble.transport.common import PacketParser
from lifetime import until_orphaned

CONNECTION_TIMEOUT = 0x08


class Chip:
    """One listening port: at most one host, each host its own controller."""

    def __init__(self, link: LocalLink, number: int) -> None:
        self.link = link
        self.number = number
        self.controller: Controller | None = None
        self.hosts = 0

    def address(self) -> str:
        return f"F0:00:00:00:00:{self.number:02X}"

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.controller is not None:
            logging.info("chip %d: refused a second host", self.number)
            writer.close()
            return
        self.hosts += 1

        class Sink:
            """The controller's packets toward the host, H4 framed already."""

            def on_packet(self, packet: bytes) -> None:
                if not writer.is_closing():
                    writer.write(packet)

        controller = Controller(
            f"chip{self.number}.{self.hosts}", host_sink=Sink(), link=self.link, public_address=self.address()
        )
        self.controller = controller
        parser = PacketParser(controller)
        logging.info("chip %d: host %d connected", self.number, self.hosts)
        try:
            while data := await reader.read(65536):
                try:
                    parser.feed_data(data)
                except Exception as error:  # an invalid packet type: the stream cannot be resynchronised
                    logging.warning("chip %d: %s; closing the host's connection", self.number, error)
                    break
        except ConnectionError:
            pass
        finally:
            self.power_off(controller)
            self.controller = None
            writer.close()
            logging.info("chip %d: host %d gone", self.number, self.hosts)

    def power_off(self, controller: Controller) -> None:
        """Ends the controller's links toward their peers and takes it off the air."""
        for connection in list(controller.le_connections.values()):
            try:
                connection.send_ll_control_pdu(ll.TerminateInd(CONNECTION_TIMEOUT))
            except Exception as error:  # the peer's controller may already be gone
                logging.info("chip %d: could not end a link: %s", self.number, error)
        controller.le_connections.clear()
        controller.le_legacy_advertiser.stop()
        for advertising_set in controller.advertising_sets.values():
            advertising_set.stop()
        if controller in self.link.controllers:
            self.link.remove_controller(controller)



async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--chips", type=int, default=2)
    parser.add_argument("--lifetime", type=float, default=900.0)
    arguments = parser.parse_args()
    if not 1 <= arguments.chips <= 32:
        parser.error("--chips must be 1 to 32")

    link = LocalLink()
    servers = []
    ports = []
    for number in range(1, arguments.chips + 1):
        chip = Chip(link, number)
        server = await asyncio.start_server(chip.serve, "127.0.0.1", 0)
        servers.append(server)
        ports.append(server.sockets[0].getsockname()[1])
    print(json.dumps({"ports": ports}), flush=True)

    await until_orphaned(arguments.lifetime)
    for server in servers:
        server.close()


if __name__ == "__main__":
    logging.basicConfig(level=logging.INFO, stream=sys.stderr, format="rig: %(message)s")
    # Keep Bumble's own per-packet chatter out of a test's output.
    logging.getLogger("bumble").setLevel(logging.WARNING)
    asyncio.run(main())
