#!/usr/bin/env python3
"""Upload time of one image over Bluetooth LE through Bumble controllers: ours vs smpclient.

Both clients are centrals on their own Bumble controller of one rig (Tests/Bumble/rig.py); the
peripheral is run by Bumble's own host (Tests/Bumble/smp_peripheral.py) on a third, forwarding
SMP frames to `mcumgr simulator` over UDP on loopback. Neither client's peripheral code is
involved, and both go through the same controllers, link and peer GATT server.

- ours: `mcumgr --conn ble://NAME?hci=tcp://... image upload FILE --json`; its `seconds` counts
  from the first chunk to the last answer.
- smpclient: its Bumble transport (`SMPBumbleTransport`, Tests/Bumble/smpclient_central.py); its
  `seconds` counts its upload loop, after it connected.
Alternating, median of RUNS each; the whole processes' wall-clock times too (start-up, the scan
and the connection included: Bumble's advertiser takes its interval, about a second, to be seen
and again to accept the connection, the same for both).

What the rig does not model: there is no radio. Bumble's link delivers a PDU as soon as the
sending controller takes it: no connection interval, no air time, no lost packets. Its controller
has 64 ACL buffers of 27 bytes and refuses LE Set Data Length. Times here compare the hosts'
and clients' own costs, not what a radio would allow.

Usage: Benchmarks/hci-upload.py [--mcumgr PATH] [--size BYTES] [--runs N]   (from the package root)
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUMBLE = os.path.join(ROOT, "Tests", "Bumble")


def start(arguments: list[str], **kwargs) -> subprocess.Popen:
    return subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kwargs)


def first_line(process: subprocess.Popen) -> str:
    line = process.stdout.readline() if process.stdout else ""
    if not line:
        raise RuntimeError(f"{process.args[:3]} printed nothing: {process.stderr.read() if process.stderr else ''}")
    return line


def make_image(mcumgr: str, size: int, directory: str) -> str:
    """A signed-looking MCUboot image of `size` bytes of random payload (imgtool, a peer we did
    not write)."""
    raw = os.path.join(directory, "raw.bin")
    image = os.path.join(directory, "app.bin")
    with open(raw, "wb") as file:
        file.write(os.urandom(size - 0x200))
    imgtool = os.path.join(os.path.dirname(sys.executable), "imgtool")
    subprocess.run(
        [imgtool, "create", "--version", "2.0.0", "--header-size", "0x200", "--slot-size", "0x80000",
         "--pad-header", raw, image],
        check=True,
    )
    return image


def ours(mcumgr: str, controller: str, image: str) -> tuple[float, float]:
    begun = time.monotonic()
    result = subprocess.run(
        [mcumgr, "--conn", f"ble://bench?hci={controller}", "image", "upload", image, "--json"],
        capture_output=True, text=True, timeout=600,
    )
    wall = time.monotonic() - begun
    if result.returncode != 0:
        raise RuntimeError(f"ours failed: {result.stderr}")
    done = [json.loads(line) for line in result.stdout.splitlines() if '"done"' in line]
    return done[-1]["seconds"], wall


def smpclient(controller: str, image: str) -> tuple[float, float]:
    begun = time.monotonic()
    result = subprocess.run(
        [sys.executable, os.path.join(BUMBLE, "smpclient_central.py"), "--hci", controller, "--name", "bench",
         f"upload:{image}"],
        capture_output=True, text=True, timeout=600,
    )
    wall = time.monotonic() - begun
    steps = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    if result.returncode != 0 or not steps or "seconds" not in steps[-1]:
        raise RuntimeError(f"smpclient failed: {result.stdout} {result.stderr}")
    return steps[-1]["seconds"], wall


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mcumgr", default=os.path.join(ROOT, ".build", "release", "mcumgr"))
    parser.add_argument("--size", type=int, default=200_000)
    parser.add_argument("--runs", type=int, default=5)
    arguments = parser.parse_args()

    processes: list[subprocess.Popen] = []
    with tempfile.TemporaryDirectory() as directory:
        try:
            rig = start([sys.executable, "-u", os.path.join(BUMBLE, "rig.py"), "--chips", "3"])
            processes.append(rig)
            ports = json.loads(first_line(rig))["ports"]
            # The UDP hop models no link: frames stay below its 1,500-byte datagrams.
            device = start([arguments.mcumgr, "simulator", "--udp", "127.0.0.1:0", "--buf-size", "1400"])
            processes.append(device)
            udp_port = first_line(device).strip().rsplit(":", 1)[1]
            peripheral = start([sys.executable, "-u", os.path.join(BUMBLE, "smp_peripheral.py"),
                                "--hci", f"tcp-client:127.0.0.1:{ports[0]}", "--name", "bench", "--udp", udp_port])
            processes.append(peripheral)
            first_line(peripheral)
            image = make_image(arguments.mcumgr, arguments.size, directory)

            runs: dict[str, list[tuple[float, float]]] = {"ours": [], "smpclient": []}
            for _ in range(arguments.runs):
                runs["ours"].append(ours(arguments.mcumgr, f"tcp://127.0.0.1:{ports[1]}", image))
                runs["smpclient"].append(smpclient(f"tcp-client:127.0.0.1:{ports[2]}", image))
        finally:
            for process in processes:
                process.terminate()
            for process in processes:
                process.wait(timeout=30)

    median = {name: statistics.median(s for s, _ in values) for name, values in runs.items()}
    wall = {name: statistics.median(w for _, w in values) for name, values in runs.items()}
    print(f"{arguments.size}-byte image, {arguments.runs} runs each, alternating; medians")
    print("| client | upload, s | whole process, s |")
    print("|---|---:|---:|")
    print(f"| ours | {median['ours']:.2f} | {wall['ours']:.2f} |")
    print(f"| smpclient | {median['smpclient']:.2f} | {wall['smpclient']:.2f} |")
    print(f"smpclient / ours: upload {median['smpclient'] / median['ours']:.2f}×, "
          f"whole process {wall['smpclient'] / wall['ours']:.2f}×")
    for name, values in runs.items():
        print(f"{name}: " + ", ".join(f"{s:.2f}/{w:.2f}" for s, w in values))


if __name__ == "__main__":
    main()
