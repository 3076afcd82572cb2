#!/usr/bin/env python3
"""The cost of an uploaded byte (issue 23, item 4): client CPU per MiB, ours vs smpclient.

The same signed image goes to the same simulated device (`mcumgr simulator --udp` on 127.0.0.1,
its defaults: the observed Zephyr server's buf_size 2048, buf_count 4 with the buffer pool on,
0.8 ms per request; a fresh simulator per upload) with

  * ours: the release `mcumgr --conn udp://... image upload FILE`, as a user runs it;
  * smpclient (7.3.0, from .venv): `SMPClient.upload`, the loop docs/BENCHMARKS.md already uses.

CPU is user + system time of the client process only (the simulator runs in a process of its own
and is not counted), read from getrusage(RUSAGE_CHILDREN) around each client run, so the
resolution is a microsecond, not /usr/bin/time's 10 ms. Both are shown for the whole process and
less their start-up: smpclient's upload loop alone (getrusage inside the script around
`async for ... in client.upload`, which leaves out Python's start-up and imports), ours less the
CPU of the same tool running a connect-and-echo against the same simulator (process start-up,
arguments, connecting; parsing and hashing the image stay in ours, as hashing stays in
smpclient's loop).

With --floor, a third client runs in the same rounds: Benchmarks/upload-floor.c (built with cc -O2),
one thread doing nothing but the protocol's system calls — a send and a receive per chunk of the
same size as ours, with no hashing, logging or progress. Its CPU per MiB is the least any client
spends on this machine and kernel, and smpclient / floor the most any client can gain on smpclient.

With --callgrind, ours also runs under `valgrind --tool=callgrind` (instructions are robust to a
busy machine): instructions per uploaded byte, for the whole upload command and less a command
that only connects and echoes (the fixed cost of starting the tool).

Usage (from the package root, after scripts/setup-peers.sh):
  python3 Benchmarks/cpu-per-mib.py [--mcumgr PATH] [--simulator PATH] [--size BYTES] [--runs N]
                                    [--callgrind] [--floor] [--skip-smpclient]
Without --mcumgr it builds `swift build -c release --product mcumgr` and uses .build/release/mcumgr.
"""

import argparse
import os
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

SMPCLIENT = r"""
import asyncio, resource, sys, time
from smpclient import SMPClient
from smpclient.transport.udp import SMPUDPTransport
port, path = int(sys.argv[1]), sys.argv[2]
def cpu():
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime
async def main():
    transport = SMPUDPTransport()
    connect = transport.connect
    async def connect_to_port(address, timeout_s, port_=1337):
        await connect(address, timeout_s, port=port)
    transport.connect = connect_to_port
    client = SMPClient(transport, "127.0.0.1")
    await client.connect()
    data = open(path, "rb").read()
    before = cpu()
    async for offset in client.upload(data):
        pass
    print(cpu() - before)
    await client.disconnect()
asyncio.run(main())
"""


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def children_cpu():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


class Simulator:
    """A fresh simulated device for one upload; its CPU is not a client's."""

    def __init__(self, binary, image_size):
        self.port = free_port()
        slot = (image_size + 0x10000) // 0x1000 * 0x1000
        self.log = tempfile.TemporaryFile()
        self.process = subprocess.Popen(
            [binary, "simulator", "--udp", f"127.0.0.1:{self.port}", "--slot-size", hex(slot)],
            stdout=self.log,
            stderr=subprocess.STDOUT,
        )

    def wait_ready(self, mcumgr):
        for _ in range(100):
            ready = subprocess.run(
                [mcumgr, "--conn", f"udp://127.0.0.1:{self.port}", "--timeout", "0.2", "--retries", "0",
                 "os", "echo", "ready"],
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
            )
            if ready.returncode == 0:
                return
            time.sleep(0.1)
        raise RuntimeError("the simulator did not answer")

    def stop(self):
        self.process.terminate()
        self.process.wait()


def timed(command, **kwargs):
    """Runs a client to completion; returns (CPU seconds of that process, wall seconds, stdout)."""
    # The readiness probes above are children too: take the difference around this run only.
    before_cpu, before_wall = children_cpu(), time.perf_counter()
    result = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, **kwargs)
    cpu, wall = children_cpu() - before_cpu, time.perf_counter() - before_wall
    if result.returncode != 0:
        sys.stderr.write(result.stderr.decode(errors="replace"))
        raise RuntimeError(f"{command[0]} failed with status {result.returncode}")
    return cpu, wall, result.stdout.decode()


def run_ours(args, image, command_tail):
    simulator = Simulator(args.simulator, os.path.getsize(image))
    try:
        simulator.wait_ready(args.mcumgr)
        cpu, wall, _ = timed([args.mcumgr, "--conn", f"udp://127.0.0.1:{simulator.port}"] + command_tail)
        return cpu, wall
    finally:
        simulator.stop()


def run_smpclient(args, image, python):
    simulator = Simulator(args.simulator, os.path.getsize(image))
    try:
        simulator.wait_ready(args.mcumgr)
        cpu, wall, out = timed([python, "-c", SMPCLIENT, str(simulator.port), image])
        return cpu, float(out.strip().splitlines()[-1]), wall
    finally:
        simulator.stop()


def run_floor(args, image, floor):
    simulator = Simulator(args.simulator, os.path.getsize(image))
    try:
        simulator.wait_ready(args.mcumgr)
        cpu, wall, out = timed([floor, str(simulator.port), image, str(args.floor_chunk)])
        return cpu, float(out.strip().splitlines()[-1]), wall
    finally:
        simulator.stop()


def callgrind(args, image, work):
    """Instructions (callgrind's Ir) of ours: the upload, and a connect-and-echo for the fixed cost."""

    # Valgrind 3.19 cannot read the DWARF 5 the Swift toolchain writes: it runs a copy without it.
    binary = os.path.join(work, "mcumgr-without-debug-info")
    subprocess.run(["strip", "--strip-debug", "-o", binary, args.mcumgr], check=True)

    def instructions(name, command_tail):
        simulator = Simulator(args.simulator, os.path.getsize(image))
        try:
            simulator.wait_ready(args.mcumgr)
            out = os.path.join(work, f"callgrind.{name}")
            subprocess.run(
                ["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}", binary,
                 "--conn", f"udp://127.0.0.1:{simulator.port}", "--timeout", "30"] + command_tail,
                stdout=subprocess.DEVNULL,
                stderr=subprocess.DEVNULL,
                check=True,
            )
            with open(out) as profile:
                for line in profile:
                    if line.startswith("summary:") or line.startswith("totals:"):
                        return int(line.split()[1])
            raise RuntimeError("no totals in " + out)
        finally:
            simulator.stop()

    return instructions("upload", ["image", "upload", image]), instructions("echo", ["os", "echo", "x"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--mcumgr", help="a release mcumgr binary (default: build one)")
    parser.add_argument("--simulator", help="the mcumgr binary that runs the simulator (default: --mcumgr)")
    parser.add_argument("--size", type=int, default=4 * 1024 * 1024, help="image size in bytes (default 4 MiB)")
    parser.add_argument("--runs", type=int, default=3, help="runs of each client; the median is shown")
    parser.add_argument("--callgrind", action="store_true", help="also count ours' instructions per byte")
    parser.add_argument("--skip-smpclient", action="store_true")
    parser.add_argument("--floor", action="store_true", help="also run the one-thread C client (upload-floor.c)")
    parser.add_argument("--floor-chunk", type=int, default=1440,
                        help="data bytes per chunk of the floor client (default 1440, as ours sends)")
    args = parser.parse_args()
    os.chdir(ROOT)
    if not args.mcumgr:
        subprocess.run(["swift", "build", "-c", "release", "--product", "mcumgr"], check=True,
                       stdout=subprocess.DEVNULL)
        args.mcumgr = os.path.join(ROOT, ".build/release/mcumgr")
    args.mcumgr = os.path.abspath(args.mcumgr)
    args.simulator = os.path.abspath(args.simulator or args.mcumgr)
    venv = os.environ.get("MCUMGR_PEERS_VENV", os.path.join(ROOT, ".venv"))
    python = os.path.join(venv, "bin", "python")
    work = tempfile.mkdtemp(prefix="cpu-per-mib-")
    try:
        subprocess.run(["bash", "Examples/make-example-image.sh", "--signed", work, str(args.size)], check=True,
                       stdout=subprocess.DEVNULL)
        image = os.path.join(work, "app.signed.bin")
        mib = os.path.getsize(image) / 1048576
        print(f"image: {os.path.getsize(image)} bytes ({mib:.2f} MiB); ours: {args.mcumgr}; "
              f"simulator: {args.simulator}; {args.runs} runs each, median shown")
        floor = None
        if args.floor:
            floor = os.path.join(work, "upload-floor")
            subprocess.run(["cc", "-O2", "-o", floor, os.path.join(ROOT, "Benchmarks", "upload-floor.c")], check=True)
        ours, start_up, peer, peer_loop, floor_loop = [], [], [], [], []
        for _ in range(args.runs):
            cpu, wall = run_ours(args, image, ["image", "upload", image])
            ours.append(cpu)
            print(f"  ours: {cpu:.3f} CPU-s ({wall:.2f} s wall)", file=sys.stderr)
            cpu, wall = run_ours(args, image, ["os", "echo", "x"])
            start_up.append(cpu)
            print(f"  ours, connect and echo: {cpu:.3f} CPU-s ({wall:.2f} s wall)", file=sys.stderr)
            if not args.skip_smpclient:
                cpu, loop, wall = run_smpclient(args, image, python)
                peer.append(cpu)
                peer_loop.append(loop)
                print(f"  smpclient: {cpu:.3f} CPU-s, upload loop {loop:.3f} ({wall:.2f} s wall)", file=sys.stderr)
            if floor:
                cpu, loop, wall = run_floor(args, image, floor)
                floor_loop.append(loop)
                print(f"  floor: {cpu:.3f} CPU-s, upload loop {loop:.3f} ({wall:.2f} s wall)", file=sys.stderr)
        ours_mib = statistics.median(ours) / mib
        # Ours less its start-up: the same process running a connect-and-echo instead of the upload.
        marginal_mib = (statistics.median(ours) - statistics.median(start_up)) / mib
        print(f"ours, connect-and-echo command (start-up): {statistics.median(start_up):.4f} CPU-s")
        print("| client | CPU-s per MiB, whole process | CPU-s per MiB, less start-up | µs per KiB, less start-up |")
        print("|---|---:|---:|---:|")
        print(f"| ours (release `mcumgr image upload`) | {ours_mib:.4f} | {marginal_mib:.4f} | "
              f"{marginal_mib * 1e6 / 1024:.1f} |")
        ratios = []
        if peer:
            peer_mib, loop_mib = statistics.median(peer) / mib, statistics.median(peer_loop) / mib
            print(f"| smpclient 7.3.0 (less start-up: its upload loop alone) | {peer_mib:.4f} | {loop_mib:.4f} | "
                  f"{loop_mib * 1e6 / 1024:.1f} |")
            ratios.append(f"smpclient / ours, less start-up on both sides: {loop_mib / marginal_mib:.1f}×; "
                          f"smpclient's upload loop alone / ours' whole process: {loop_mib / ours_mib:.1f}×")
        if floor_loop:
            floor_mib = statistics.median(floor_loop) / mib
            print(f"| floor (upload-floor.c: one thread, the system calls alone) | — | {floor_mib:.4f} | "
                  f"{floor_mib * 1e6 / 1024:.1f} |")
            ratios.append(f"ours / floor: {marginal_mib / floor_mib:.1f}×")
            if peer:
                ratios.append(f"smpclient / floor (the most any client gains on smpclient): {loop_mib / floor_mib:.1f}×")
        if ratios:
            print("\n" + "\n".join(ratios))
        if args.callgrind:
            upload, echo = callgrind(args, image, work)
            size = os.path.getsize(image)
            print(f"\ncallgrind, ours: {upload:,} instructions for the upload command, {echo:,} for a "
                  f"connect-and-echo; per uploaded byte: {upload / size:.1f} (whole command), "
                  f"{(upload - echo) / size:.1f} (less the echo command)")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
