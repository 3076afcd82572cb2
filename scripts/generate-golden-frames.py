#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Regenerates Tests/SMPCoreTests/Fixtures/golden-frames.jsonl.

Run with the peers' interpreter (the PyPI `smp` 4.2.0 and `cbor2` packages):

    .venv/bin/python scripts/generate-golden-frames.py

Each output line is one SMP frame:

* `name`      - the Swift type that decodes the payload, e.g. `ImageManagement.Upload` or
                `ImageManagement.Upload.Response`; `SMPDeviceError` for error envelopes.
* `kind`      - `request`, `response` or `error`.
* `hex`       - the whole frame (8-byte header + CBOR payload).
* `canonical` - true when the `smp` package produced the bytes with its canonical CBOR encoder
                (the Swift test then compares bytes); false when the message was built here with
                cbor2 in insertion order, as a device or another client would send it, because
                `smp` lacks the command or the shape (the test then compares decoded maps).
* `note`      - what the line exercises.
* `expect_hex` (optional) - where our types deliberately re-encode differently from the input
                (a peer disagreement or a legacy shape), the frame our canonical encoding must
                produce instead; built here with cbor2 canonical encoding.
* `expect_error` (optional) - the `SMPError` code (its description) decoding must fail with,
                for frames a peer builds wrongly.
* `code_name` (errors only) - the name `SMPDeviceError.codeName` must give (Zephyr's names).

Sequence numbers are assigned in file order (mod 256), except for the `peers.md` §7 vectors,
which are reproduced verbatim with their own sequence numbers.
"""

from __future__ import annotations

import hashlib
import json
import struct
import sys
from pathlib import Path

import cbor2
from smp import enumeration_management as smpenum
from smp import file_management as smpfs
from smp import header as smphdr
from smp import image_management as smpimg
from smp import os_management as smpos
from smp import settings_management as smpsettings
from smp import shell_management as smpshell
from smp import statistics_management as smpstat
from smp import transport_management as smptransport
from smp import zephyr_management as smpzephyr

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "Tests" / "SMPCoreTests" / "Fixtures" / "golden-frames.jsonl"

READ, READ_RSP, WRITE, WRITE_RSP = 0, 1, 2, 3
V1, V2 = 0, 1

lines: list[dict] = []
_sequence = 0


def next_sequence() -> int:
    global _sequence
    value = _sequence % 256
    _sequence += 1
    return value


def header(op: int, group: int, command: int, length: int, sequence: int, version: int = V2) -> bytes:
    return struct.pack("!BBHHBB", (version << 3) | op, 0, length, group, sequence, command)


def add(name: str, kind: str, frame: bytes, canonical: bool, note: str, **extra: object) -> None:
    line = {"name": name, "kind": kind, "hex": frame.hex(), "canonical": canonical, "note": note}
    line.update(extra)
    lines.append(line)


def smp(name: str, message_type: type, note: str = "", /, **fields: object) -> None:
    """A message built by the `smp` package (canonical CBOR)."""
    message = message_type(sequence=next_sequence(), **fields)
    kind = "response" if name.endswith(".Response") else "request"
    add(name, kind, bytes(message), True, note or f"smp {message_type.__name__}")


def raw(name: str, op: int, group: int, command: int, payload: dict, note: str, **extra: object) -> None:
    """A message `smp` cannot build: cbor2 in insertion order, like a device or another client."""
    body = cbor2.dumps(payload)
    kind = "response" if op in (READ_RSP, WRITE_RSP) else "request"
    add(name, kind, header(op, group, command, len(body), next_sequence()) + body, False, note, **extra)


def expected(op: int, group: int, command: int, payload: dict) -> str:
    """The canonical frame our types must produce for the previous line (same sequence)."""
    sequence = _sequence - 1
    body = cbor2.dumps(payload, canonical=True)
    return (header(op, group, command, len(body), sequence) + body).hex()


def smp_error(error_type: type, op: int, group: int, command: int, rc: int, code_name: str, note: str) -> None:
    """A v2 `err` envelope built by the `smp` package's error class."""
    payload = {"err": {"group": group, "rc": rc}}
    length = len(cbor2.dumps(payload, canonical=True))
    hdr = smphdr.Header(op, smphdr.Version.V2, smphdr.Flag(0), length, group, next_sequence(), command)
    message = error_type.load(hdr, payload)
    add("SMPDeviceError", "error", bytes(message), True, note, code_name=code_name)


def raw_error(op: int, group: int, command: int, payload: dict, code_name: str, note: str, version: int = V2) -> None:
    body = cbor2.dumps(payload)
    frame = header(op, group, command, len(body), next_sequence(), version) + body
    add("SMPDeviceError", "error", frame, False, note, code_name=code_name)


IMG = bytes(range(64))
IMG_SHA = hashlib.sha256(IMG).digest()
HASH_A = hashlib.sha256(b"image A").digest()
HASH_B = hashlib.sha256(b"image B").digest()

# --- peers.md §7 vectors, verbatim --------------------------------------------------------------
PEERS = [
    ("OSManagement.Echo", "request", "0a00000900000000a161646568656c6c6f", "EchoWrite v2 seq0"),
    ("OSManagement.Echo", "request", "0200000900000000a161646568656c6c6f", "EchoWrite v1 seq0"),
    ("OSManagement.Echo.Response", "response", "0b00000900000000a161726568656c6c6f", "EchoWrite response v2"),
    (
        "ImageManagement.Upload",
        "request",
        "0a00006000010101a5636c656e1840636f666600637368615820fdeab9acf3710362bd2658cdc9a29e8f9c757fcf98116"
        "03a8c447cd1d915110864646174615820000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
        "65696d61676500",
        "ImageUploadWrite first chunk",
    ),
    (
        "ImageManagement.Upload",
        "request",
        "0a00002e00010201a2636f6666182064646174615820202122232425262728292a2b2c2d2e2f303132333435363738393a"
        "3b3c3d3e3f",
        "ImageUploadWrite next chunk",
    ),
    ("ImageManagement.Upload.Response", "response", "0b00000700010101a1636f66661820", "upload response off 32"),
    (
        "ImageManagement.Upload.Response",
        "response",
        "0b00000e00010201a2636f66661840656d61746368f5",
        "upload response off 64, match",
    ),
    ("ImageManagement.StateRead", "request", "0800000100010300a0", "ImageStatesRead"),
    ("ImageManagement.StateWrite", "request", "0a00000a00010400a167636f6e6669726df5", "confirm"),
    (
        "ImageManagement.StateWrite",
        "request",
        "0a00003100010500a264686173685820fdeab9acf3710362bd2658cdc9a29e8f9c757fcf9811603a8c447cd1d915110867"
        "636f6e6669726df4",
        "test with hash",
    ),
    ("OSManagement.Reset", "request", "0a00000100000605a0", "ResetWrite"),
    ("OSManagement.MCUmgrParameters", "request", "0800000100000706a0", "MCUmgrParametersRead"),
    ("ImageManagement.Erase", "request", "0a00000700010805a164736c6f7401", "ImageErase slot 1"),
]
for name, kind, hexed, note in PEERS:
    add(name, kind, bytes.fromhex(hexed), True, f"peers.md §7 vector: {note}")
add("SMPDeviceError", "error", bytes.fromhex("0300000500000200a162726308"), True, "peers.md §7 vector: v1 {rc: 8}",
    code_name="ENOTSUP")
_sequence = 16

# --- OS (0) --------------------------------------------------------------------------------------
smp("OSManagement.Echo", smpos.EchoWriteRequest, d="hello, SMP \u2713")
smp("OSManagement.Echo.Response", smpos.EchoWriteResponse, r="hello, SMP \u2713")
raw("OSManagement.ConsoleEchoControl", WRITE, 0, 1, {"echo": 1}, "console echo on (Nordic/Mynewt key; smp lacks it)")
raw("OSManagement.ConsoleEchoControl.Response", WRITE_RSP, 0, 1, {}, "empty success")
smp("OSManagement.TaskStatistics", smpos.TaskStatisticsReadRequest)
smp(
    "OSManagement.TaskStatistics.Response",
    smpos.TaskStatisticsReadResponse,
    "one full task, one with only the always-present fields (ONLY_SUPPORTED_STATS)",
    tasks={
        "main": dict(prio=0, tid=1, state=2, stkuse=96, stksiz=256, cswcnt=12, runtime=4000, last_checkin=0,
                     next_checkin=0),
        "idle": dict(prio=15, tid=2, state=0),
    },
)
smp("OSManagement.MemoryPoolStatistics", smpos.MemoryPoolStatisticsReadRequest)
smp(
    "OSManagement.MemoryPoolStatistics.Response",
    smpos.MemoryPoolStatisticsReadResponse,
    "pools under `mpools` (Zephyr/Mynewt); smp passes the key through as an extra field",
    mpools={"0": dict(blksiz=1, nblks=4096, nfree=1024, min=512), "msys": dict(nblks=12, nfree=10)},
)
raw(
    "OSManagement.MemoryPoolStatistics.Response",
    READ_RSP,
    0,
    3,
    {"heap": {"blksiz": 1, "nblks": 2048, "nfree": 100, "min": 50}},
    "pools at the top level as the Zephyr doc draws them; we re-encode under `mpools`",
)
lines[-1]["expect_hex"] = expected(READ_RSP, 0, 3, {"mpools": {"heap": {"blksiz": 1, "nblks": 2048, "nfree": 100, "min": 50}}})
smp("OSManagement.DateTimeRead", smpos.DateTimeReadRequest)
smp("OSManagement.DateTimeRead.Response", smpos.DateTimeReadResponse, datetime="2026-11-22T15:39:41.123456+01:00")
smp("OSManagement.DateTimeWrite", smpos.DateTimeWriteRequest, datetime="2026-11-22T15:39:41")
smp("OSManagement.DateTimeWrite.Response", smpos.DateTimeWriteResponse)
smp("OSManagement.Reset", smpos.ResetWriteRequest, "boot_mode 1 (bootloader)", boot_mode=1)
smp(
    "OSManagement.Reset",
    smpos.ResetWriteRequest,
    "PEER DISAGREEMENT: smp sends force as the integer 1; Zephyr decodes `force` with zcbor_bool_decode and "
    "Nordic sends true, so we decode 1 as true and encode a Boolean",
    force=1,
)
lines[-1]["expect_hex"] = expected(WRITE, 0, 5, {"force": True})
raw("OSManagement.Reset", WRITE, 0, 5, {"boot_mode": 1, "force": True}, "Nordic's form: Boolean force + boot_mode")
smp("OSManagement.Reset.Response", smpos.ResetWriteResponse)
smp("OSManagement.MCUmgrParameters.Response", smpos.MCUMgrParametersReadResponse, buf_size=2048, buf_count=4)
smp("OSManagement.ApplicationInfo", smpos.OSApplicationInfoReadRequest, format="snrv")
smp("OSManagement.ApplicationInfo", smpos.OSApplicationInfoReadRequest, "no format: device default `s`")
smp("OSManagement.ApplicationInfo.Response", smpos.OSApplicationInfoReadResponse,
    output="Zephyr nrf52840dk 4.2.0 v4.2.0-1-gabc")
smp("OSManagement.BootloaderInfo", smpos.BootloaderInformationReadRequest)
smp("OSManagement.BootloaderInfo", smpos.BootloaderInformationReadRequest, "query mode", query="mode")
smp("OSManagement.BootloaderInfo.Response", smpos.BootloaderInformationReadResponse, bootloader="MCUboot")
raw(
    "OSManagement.BootloaderInfo.Response",
    READ_RSP,
    0,
    8,
    {"mode": 3, "no-downgrade": True},
    "answer to query `mode`; smp 4.2.0 cannot represent it (it requires `bootloader`)",
)

# --- Image (1) -----------------------------------------------------------------------------------
smp(
    "ImageManagement.StateRead.Response",
    smpimg.ImageStatesReadResponse,
    "full flags on slot 0, frugal (false flags omitted, no image) on slot 1",
    images=[
        dict(image=0, slot=0, version="1.2.3", hash=HASH_A, bootable=True, pending=False, confirmed=True, active=True,
             permanent=False),
        dict(slot=1, version="1.3.0.7", hash=HASH_B, pending=True),
    ],
    splitStatus=0,
)
smp("ImageManagement.StateWrite", smpimg.ImageStatesWriteRequest, "test: hash only", hash=HASH_B)
STATE_AFTER_TEST = [
    dict(image=0, slot=0, version="1.2.3", hash=HASH_A, bootable=True, confirmed=True, active=True),
    dict(image=0, slot=1, version="1.3.0.7", hash=HASH_B, bootable=True, pending=True),
]
smp(
    "ImageManagement.StateWrite.Response",
    smpimg.ImageStatesWriteResponse,
    "PEER BUG: smp 4.2.0's ImageStatesWriteResponse inherits op 1 (read response) from ImageStatesReadResponse; "
    "a device answers a write with op 3, so we refuse this frame as the answer to a state write",
    images=STATE_AFTER_TEST,
)
lines[-1]["expect_error"] = "unexpected operation"
raw("ImageManagement.StateWrite.Response", WRITE_RSP, 1, 0, {"images": STATE_AFTER_TEST},
    "state after test, with the write-response op 3 a device uses")
smp(
    "ImageManagement.Upload",
    smpimg.ImageUploadWriteRequest,
    "first chunk with every optional field",
    off=0,
    data=IMG[:32],
    image=1,
    len=64,
    sha=IMG_SHA,
    upgrade=True,
)
smp("ImageManagement.Upload.Response", smpimg.ImageUploadWriteResponse, "mismatch", off=64, match=False)
smp("ImageManagement.Erase", smpimg.ImageEraseRequest, "no slot: device default")
smp("ImageManagement.Erase.Response", smpimg.ImageEraseResponse)
raw("ImageManagement.SlotInfo", READ, 1, 6, {}, "slot info (smp 4.2.0 lacks command 6)")
raw(
    "ImageManagement.SlotInfo.Response",
    READ_RSP,
    1,
    6,
    {
        "images": [
            {"image": 0, "slots": [{"slot": 0, "size": 0x76000, "upload_image_id": 0},
                                   {"slot": 1, "size": 0x76000, "upload_image_id": 1}], "max_image_size": 0x75000},
            {"image": 1, "slots": [{"slot": 0, "size": 0x20000}, {"slot": 1, "size": 0x20000}]},
        ]
    },
    "two images, direct-upload ids and max size on the first",
)

# --- Statistics (2) ------------------------------------------------------------------------------
smp("StatisticsManagement.GroupData", smpstat.GroupDataRequest, name="ble_phy")
smp("StatisticsManagement.GroupData.Response", smpstat.GroupDataResponse, name="ble_phy",
    fields={"tx_good": 1204, "rx_crc_err": 3, "radio_state_errs": 0})
smp("StatisticsManagement.ListGroups", smpstat.ListOfGroupsRequest)
smp("StatisticsManagement.ListGroups.Response", smpstat.ListOfGroupsResponse, stat_list=("ble_phy", "smp"))

# --- Settings (3) --------------------------------------------------------------------------------
smp("SettingsManagement.Read", smpsettings.ReadSettingRequest, name="bt/name", max_size=64)
smp("SettingsManagement.Read.Response", smpsettings.ReadSettingResponse, val=b"sensor-7\x00", max_size=32)
smp("SettingsManagement.Write", smpsettings.WriteSettingRequest, name="bt/name", val=b"\x01\x02\xff")
smp("SettingsManagement.Write.Response", smpsettings.WriteSettingResponse)
smp("SettingsManagement.Delete", smpsettings.DeleteSettingRequest, name="bt/name")
smp("SettingsManagement.Delete.Response", smpsettings.DeleteSettingResponse)
smp("SettingsManagement.Commit", smpsettings.CommitSettingsRequest)
smp("SettingsManagement.Commit.Response", smpsettings.CommitSettingsResponse)
smp("SettingsManagement.Load", smpsettings.LoadSettingsRequest)
smp("SettingsManagement.Load.Response", smpsettings.LoadSettingsResponse)
smp("SettingsManagement.Save", smpsettings.SaveSettingsRequest, "save everything")
raw("SettingsManagement.Save", WRITE, 3, 3, {"name": "bt"}, "save one subtree (smp 4.2.0 lacks `name`)")
smp("SettingsManagement.Save.Response", smpsettings.SaveSettingsResponse)

# --- Log (4), Crash (5), Run (7): Mynewt, keys from newtmgr -------------------------------------
raw("LogManagement.Show", READ, 4, 0, {"log_name": "reboot_log", "ts": 1700000000000000, "index": 5},
    "every filter set")
raw("LogManagement.Show", READ, 4, 0, {}, "all logs")
raw(
    "LogManagement.Show.Response",
    READ_RSP,
    4,
    0,
    {
        "next_index": 7,
        "logs": [
            {
                "name": "reboot_log",
                "type": 2,
                "entries": [
                    {"msg": "rebooted: hard", "ts": 1700000000000001, "level": 1, "index": 5, "module": 6,
                     "type": "str", "imghash": bytes.fromhex("deadbeef")},
                    {"msg": cbor2.dumps({"a": 1}), "ts": -1, "level": 3, "index": 6, "module": 0},
                ],
            }
        ],
    },
    "text and byte messages; the optional entry keys on the first",
)
raw("LogManagement.Clear", WRITE, 4, 1, {}, "clear")
raw("LogManagement.Clear.Response", WRITE_RSP, 4, 1, {}, "empty success")
raw("LogManagement.ModuleList", READ, 4, 3, {}, "module list")
raw("LogManagement.ModuleList.Response", READ_RSP, 4, 3, {"module_map": {"DEFAULT": 0, "OS": 1, "NEWTMGR": 2}},
    "name -> id in device order")
raw("LogManagement.LevelList", READ, 4, 4, {}, "level list")
raw("LogManagement.LevelList.Response", READ_RSP, 4, 4, {"level_map": {"DEBUG": 0, "INFO": 1, "WARN": 2}},
    "name -> value")
raw("LogManagement.List", READ, 4, 5, {}, "log list")
raw("LogManagement.List.Response", READ_RSP, 4, 5, {"log_list": ["log", "reboot_log"]}, "names")
raw("CrashManagement.Trigger", WRITE, 5, 0, {"t": "div0"}, "divide by zero")
raw("CrashManagement.Trigger.Response", WRITE_RSP, 5, 0, {}, "empty success")
raw("RunManagement.Test", WRITE, 7, 0, {"testname": "all", "token": "run-42"}, "every field")
raw("RunManagement.Test.Response", WRITE_RSP, 7, 0, {}, "empty success")
raw("RunManagement.List", READ, 7, 1, {}, "list")
raw("RunManagement.List.Response", READ_RSP, 7, 1, {"run_list": ["os_test", "json_test"]}, "names")

# --- File system (8) -----------------------------------------------------------------------------
smp("FileManagement.Download", smpfs.FileDownloadRequest, off=0, name="/lfs/log.txt")
smp("FileManagement.Download.Response", smpfs.FileDownloadResponse, "first chunk carries len",
    off=0, data=b"line 1\nline 2\n", len=300)
smp("FileManagement.Download.Response", smpfs.FileDownloadResponse, "later chunk", off=14, data=b"line 3\n")
smp("FileManagement.Upload", smpfs.FileUploadRequest, off=0, data=bytes(range(16)), name="/lfs/cfg.bin", len=16)
smp("FileManagement.Upload.Response", smpfs.FileUploadResponse, off=16)
smp("FileManagement.Status", smpfs.FileStatusRequest, name="/lfs/cfg.bin")
smp("FileManagement.Status.Response", smpfs.FileStatusResponse, len=16)
smp("FileManagement.Hash", smpfs.FileHashChecksumRequest, "every option", name="/lfs/cfg.bin", type="sha256",
    off=4, len=8)
smp("FileManagement.Hash", smpfs.FileHashChecksumRequest, "name only", name="/lfs/cfg.bin")
smp("FileManagement.Hash.Response", smpfs.FileHashChecksumResponse, "sha256: bytes output, off present",
    type="sha256", off=4, len=8, output=hashlib.sha256(bytes(range(4, 12))).digest())
smp("FileManagement.Hash.Response", smpfs.FileHashChecksumResponse, "crc32: integer output, off omitted",
    type="crc32", len=16, output=0xCBF43926)
smp("FileManagement.SupportedHashTypes", smpfs.SupportedFileHashChecksumTypesRequest)
smp("FileManagement.SupportedHashTypes.Response", smpfs.SupportedFileHashChecksumTypesResponse,
    types={"crc32": dict(format=0, size=4), "sha256": dict(format=1, size=32)})
smp("FileManagement.Close", smpfs.FileCloseRequest)
smp("FileManagement.Close.Response", smpfs.FileCloseResponse)

# --- Shell (9) -----------------------------------------------------------------------------------
smp("ShellManagement.Execute", smpshell.ExecuteRequest, argv=["kernel", "uptime"])
smp("ShellManagement.Execute.Response", smpshell.ExecuteResponse, o="Uptime: 1234 ms\n", ret=0)
smp("ShellManagement.Execute.Response", smpshell.ExecuteResponse, "failing command", o="bad arg\n", ret=-22)
raw("ShellManagement.Execute.Response", WRITE_RSP, 9, 0, {"o": "legacy\n", "rc": 3},
    "legacy Zephyr: exit code in `rc` (LEGACY_RC_RETURN_CODE); we re-encode it as `ret`")
lines[-1]["expect_hex"] = expected(WRITE_RSP, 9, 0, {"o": "legacy\n", "ret": 3})

# --- Enumeration (10) ----------------------------------------------------------------------------
smp("EnumerationManagement.GroupCount", smpenum.GroupCountRequest)
smp("EnumerationManagement.GroupCount.Response", smpenum.GroupCountResponse, count=4)
smp("EnumerationManagement.ListGroups", smpenum.ListOfGroupsRequest)
smp("EnumerationManagement.ListGroups.Response", smpenum.ListOfGroupsResponse, groups=(0, 1, 10, 63, 66))
smp("EnumerationManagement.GroupAtIndex", smpenum.GroupIdRequest, index=3)
smp("EnumerationManagement.GroupAtIndex", smpenum.GroupIdRequest, "no index: the first group")
smp("EnumerationManagement.GroupAtIndex.Response", smpenum.GroupIdResponse, "last group", group=63, end=True)
smp("EnumerationManagement.GroupAtIndex.Response", smpenum.GroupIdResponse, "not last", group=1)
smp("EnumerationManagement.GroupDetails", smpenum.GroupDetailsRequest, groups=(0, 1))
smp("EnumerationManagement.GroupDetails", smpenum.GroupDetailsRequest, "all groups")
smp("EnumerationManagement.GroupDetails.Response", smpenum.GroupDetailsResponse,
    groups=(dict(group=0, name="os mgmt", handlers=9), dict(group=1)))

# --- Transport (11) ------------------------------------------------------------------------------
smp("TransportManagement.Connect", smptransport.ConnectRequest, transport=4, mode=1)
smp("TransportManagement.Connect", smptransport.BluetoothConnectRequest, "Bluetooth with every parameter",
    transport=2, address="C0:11:22:33:44:55", address_type=1, le_coded=True, mode=0)
smp("TransportManagement.Connect.Response", smptransport.ConnectResponse)
smp("TransportManagement.Disconnect", smptransport.DisconnectRequest, "this transport's bridge")
smp("TransportManagement.Disconnect", smptransport.DisconnectTransportRequest, transport=2)
smp("TransportManagement.Disconnect", smptransport.DisconnectAllRequest, all=True)
smp("TransportManagement.Disconnect.Response", smptransport.DisconnectResponse)
smp("TransportManagement.Status", smptransport.StatusRequest)
smp("TransportManagement.Status.Response", smptransport.BridgedToTransportStatusResponse, supported=2, active=1,
    bridged=True, transport=2)
smp("TransportManagement.Status.Response", smptransport.UnbridgedStatusResponse, supported=2, active=0)
smp("TransportManagement.ListTransports", smptransport.ListOfTransportsRequest)
smp("TransportManagement.ListTransports.Response", smptransport.ListOfTransportsResponse,
    transports=(dict(id=2, name="Bluetooth"), dict(id=4)))
smp("TransportManagement.Modes", smptransport.TransportModesRequest, transport=2)
smp("TransportManagement.Modes.Response", smptransport.TransportModesResponse,
    modes=(dict(id=0, description="central", outgoing=True), dict(id=1, description="peripheral", incoming=True)))
smp("TransportManagement.ConfigDetails", smptransport.TransportConfigDetailsRequest, transport=2, mode=0)
smp("TransportManagement.ConfigDetails.Response", smptransport.TransportConfigDetailsResponse,
    configs=(dict(name="address", type=3, required=True), dict(name="le_coded", type=2)))

# --- Zephyr basic (63) ---------------------------------------------------------------------------
smp("ZephyrBasicManagement.EraseStorage", smpzephyr.EraseStorageRequest)
smp("ZephyrBasicManagement.EraseStorage.Response", smpzephyr.EraseStorageResponse)

# --- SUIT (66): keys from nRF Connect SDK suitfu_mgmt and Nordic's iOS SuitManager ---------------
CLASS_ID = bytes.fromhex("08c1b59955e85fbc9e767bc29ce1b04d")
VENDOR_ID = bytes.fromhex("7617daa571fd5a858f94e28d735ce9f4")
raw("SUITManagement.ManifestList", READ, 66, 0, {}, "manifest roles")
raw("SUITManagement.ManifestList.Response", READ_RSP, 66, 0, {"manifests": [{"role": 0x20}, {"role": 0x22}]},
    "two roles")
raw("SUITManagement.ManifestState", READ, 66, 1, {"role": 0x20}, "state of one role")
raw(
    "SUITManagement.ManifestState.Response",
    READ_RSP,
    66,
    1,
    {
        "class_id": CLASS_ID,
        "vendor_id": VENDOR_ID,
        "downgrade_prevention_policy": 1,
        "independent_updateability_policy": 2,
        "signature_verification_policy": 3,
        "digest": HASH_A,
        "digest_algorithm": -16,
        "signature_check": 2,
        "sequence_number": 5,
        "semantic_version": [1, 2, 3, -2, 1],
    },
    "installed manifest: every field, in suitfu_mgmt's order",
)
raw(
    "SUITManagement.ManifestState.Response",
    READ_RSP,
    66,
    1,
    {"class_id": CLASS_ID, "vendor_id": VENDOR_ID, "downgrade_prevention_policy": 0,
     "independent_updateability_policy": 0, "signature_verification_policy": 0},
    "nothing installed: policies only",
)
raw("SUITManagement.EnvelopeUpload", WRITE, 66, 2,
    {"data": IMG[:32], "off": 0, "defer_install": True, "len": 64}, "first chunk, deferred install (Nordic order)")
raw("SUITManagement.EnvelopeUpload", WRITE, 66, 2, {"off": 0, "len": 0}, "process the deferred envelope")
raw("SUITManagement.EnvelopeUpload.Response", WRITE_RSP, 66, 2, {"rc": 0, "off": 32},
    "suitfu_mgmt always adds rc; our Response drops it")
lines[-1]["expect_hex"] = expected(WRITE_RSP, 66, 2, {"off": 32})
raw("SUITManagement.MissingImageState", READ, 66, 3, {}, "poll")
raw("SUITManagement.MissingImageState.Response", READ_RSP, 66, 3,
    {"stream_session_id": 1, "resource_id": b"file://app.bin"}, "a resource is requested")
raw("SUITManagement.MissingImageState.Response", READ_RSP, 66, 3, {}, "nothing requested yet")
raw("SUITManagement.MissingImageUpload", WRITE, 66, 4,
    {"data": IMG[:16], "off": 0, "stream_session_id": 1, "len": 64}, "first chunk of the resource")
raw("SUITManagement.MissingImageUpload.Response", WRITE_RSP, 66, 4, {"off": 16}, "progress")
raw("SUITManagement.CacheRawUpload", WRITE, 66, 5, {"data": IMG[:16], "off": 0, "target_id": 2, "len": 64},
    "first cache chunk")
raw("SUITManagement.CacheRawUpload.Response", WRITE_RSP, 66, 5, {"off": 16}, "progress")
raw("SUITManagement.Cleanup", WRITE, 66, 6, {}, "erase DFU and caches")
raw("SUITManagement.Cleanup.Response", WRITE_RSP, 66, 6, {}, "empty success")

# --- Error envelopes: one per group table (smp's classes where its enum has the code) ------------
smp_error(smpos.OSManagementErrorV2, READ_RSP, 0, 8, 3, "QUERY_YIELDS_NO_ANSWER", "bootloader info: unknown query")
smp_error(smpimg.ImageManagementErrorV2, WRITE_RSP, 1, 1, 9, "NO_FREE_SLOT", "upload refused")
raw_error(WRITE_RSP, 1, 0, {"err": {"group": 1, "rc": 34}}, "ACTIVE_SLOT_NOT_KNOWN",
          "newest image code; smp 4.2.0's enum stops at 33")
smp_error(smpstat.StatisticsManagementErrorV2, READ_RSP, 2, 0, 2, "INVALID_GROUP",
          "smp names it ERR_INVALID_GROUP")
smp_error(smpsettings.SettingsManagementErrorV2, READ_RSP, 3, 0, 3, "KEY_NOT_FOUND", "unknown setting")
raw_error(WRITE_RSP, 8, 0, {"err": {"group": 8, "rc": 11}, "len": 100}, "FILE_OFFSET_NOT_VALID",
          "file upload at a wrong offset; the reply also carries len")
smp_error(smpshell.ShellManagementErrorV2, WRITE_RSP, 9, 0, 2, "COMMAND_TOO_LONG",
          "PEER DISAGREEMENT: smp 4.2.0 names shell code 2 INVALID_FORMAT; Zephyr COMMAND_TOO_LONG")
smp_error(smpenum.EnumManagementErrorV2, READ_RSP, 10, 2, 4, "INDEX_TOO_LARGE",
          "smp names it ENUM_MGMT_ERR_INDEX_TOO_LARGE")
smp_error(smptransport.TransportManagementErrorV2, WRITE_RSP, 11, 1, 8, "NOT_BRIDGED", "disconnect without bridge")
smp_error(smpzephyr.ZephyrManagementErrorV2, WRITE_RSP, 63, 0, 4, "FLASH_ERASE_FAILED", "erase storage failed")
raw_error(WRITE_RSP, 1, 1, {"rc": 3, "rsn": "img too large"}, "EINVAL", "v1 rc with a reason", version=V1)
raw_error(WRITE_RSP, 66, 2, {"rc": 1, "off": 32}, "EUNKNOWN", "suitfu_mgmt chunk at a wrong offset: rc 1 with off")

OUTPUT.parent.mkdir(parents=True, exist_ok=True)
with OUTPUT.open("w", encoding="utf-8") as out:
    for line in lines:
        out.write(json.dumps(line, ensure_ascii=False, sort_keys=True) + "\n")
print(f"wrote {len(lines)} frames to {OUTPUT.relative_to(ROOT)}", file=sys.stderr)
