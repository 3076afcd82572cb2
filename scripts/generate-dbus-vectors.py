#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Regenerates Tests/SMPDBusTests/Fixtures/dbus-vectors.json: D-Bus messages marshalled by two
independent implementations, for the byte-for-byte tests of Sources/SMPDBus.

* little endian by dbus-fast 5.2.0 (PyPI; the peers' venv):   .venv/bin/python scripts/generate-dbus-vectors.py
* big endian by GLib's GDBusMessage (Debian's python3-gi), run by the system interpreter,
  which this script starts itself (/usr/bin/python3, or $DBUS_VECTORS_GLIB_PYTHON).

Both write their header fields in their own order (dbus-fast by field code, as our encoder does;
GLib in its hash table's order), so the Swift test compares our encoding with dbus-fast's bytes,
and decodes GLib's to the same message.

Each case's body is described in JSON the Swift test turns into values: `sig` is the body
signature, `body` a list with one JSON value per type: numbers, strings, booleans; a variant is
{"sig": S, "value": V}; an array a list; a dictionary a list of [key, value] pairs (order kept);
a structure a list; a double a string (Python's repr) so that it round-trips exactly.

With `--check` the script prints the JSON instead of writing it (the Swift test compares).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUTPUT = ROOT / "Tests" / "SMPDBusTests" / "Fixtures" / "dbus-vectors.json"

CALL, RETURN, ERROR, SIGNAL = 1, 2, 3, 4
NO_REPLY = 1

SMP_CHAR = "/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF/service000a/char000b"


def V(sig, value):
    return {"sig": sig, "value": value}


def case(name, kind, body_sig="", body=None, serial=1, flags=0, fds=0, **fields):
    return {"name": name, "kind": kind, "serial": serial, "flags": flags, "sig": body_sig,
            "body": body or [], "fds": fds, **fields}


def nest(depth, value):
    return value if depth == 0 else [nest(depth - 1, value)]


def d(x):
    return repr(float(x))


CASES = [
    case("hello", CALL, destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
         interface="org.freedesktop.DBus", member="Hello"),
    case("add-match", CALL, "s", ["type='signal',sender='org.bluez',interface='org.freedesktop.DBus.Properties'"],
         serial=2, destination="org.freedesktop.DBus", path="/org/freedesktop/DBus",
         interface="org.freedesktop.DBus", member="AddMatch"),
    case("every-basic-type", CALL, "ybnqiuxtdsogh",
         [255, True, -32768, 65535, -2147483648, 4294967295, -9223372036854775808, 18446744073709551615,
          d(-0.1), "grüße ✓", "/a/b_c/D9", "a{sv}(yv)", 0],
         serial=3, fds=1, path="/", member="Basic"),
    case("integers-at-their-limits", CALL, "ynqiuxt", [0, 32767, 0, 2147483647, 0, 9223372036854775807, 0],
         serial=4, path="/x", interface="com.example.Limits", member="Max"),
    case("doubles", CALL, "ddddd", [d(0), d(-0.0), d(1e300), d(5e-324), d(3.141592653589793)],
         serial=5, path="/x", member="Doubles"),
    case("empty-strings-and-root-path", CALL, "sog", ["", "/", ""], serial=6, path="/", member="Empty"),
    case("empty-arrays-of-every-alignment", CALL, "ayanaiaxa(y)a{sv}aas",
         [[], [], [], [], [], [], []], serial=7, path="/x", member="EmptyArrays"),
    case("empty-8-aligned-array-after-a-byte", CALL, "yax", [7, []], serial=8, path="/x", member="Pad"),
    case("struct-alignment", CALL, "y(yx)y(q)", [1, [2, 3], 4, [5]], serial=9, path="/x", member="Structs"),
    case("nested-variants", CALL, "v", [V("v", V("v", V("av", [V("s", "deep"), V("(ib)", [1, False])])))],
         serial=10, path="/x", member="Variants"),
    case("dictionaries-with-basic-keys", CALL, "a{yv}a{ot}a{ib}",
         [[[1, V("s", "one")], [2, V("ay", [1, 2])]], [["/a", 1], ["/b", 2]], [[-1, True]]],
         serial=11, path="/x", member="Dicts"),
    case("thirty-two-nested-arrays", CALL, "a" * 32 + "y", [nest(32, 9)], serial=12, path="/x", member="Deep"),
    case("write-value-command", CALL, "aya{sv}",
         [list(range(256)) + list(range(244)), [["type", V("s", "command")]]],
         serial=13, destination="org.bluez", path=SMP_CHAR,
         interface="org.bluez.GattCharacteristic1", member="WriteValue"),
    case("set-discovery-filter", CALL, "a{sv}",
         [[["UUIDs", V("as", ["8d53dc1d-1db7-4cd3-868b-8a527460aa84"])], ["Transport", V("s", "le")],
           ["DuplicateData", V("b", False)]]],
         serial=14, destination="org.bluez", path="/org/bluez/hci0", interface="org.bluez.Adapter1",
         member="SetDiscoveryFilter"),
    case("acquire-write-reply", RETURN, "hq", [0, 247], serial=15, flags=NO_REPLY, fds=1,
         reply_serial=14, destination=":1.7", sender=":1.3"),
    case("get-managed-objects-reply", RETURN, "a{oa{sa{sv}}}",
         [[["/org/bluez/hci0", [["org.bluez.Adapter1",
                                 [["Address", V("s", "00:AA:01:00:00:23")], ["Powered", V("b", True)]]]]],
           [SMP_CHAR, [["org.bluez.GattCharacteristic1",
                        [["UUID", V("s", "da2e7828-fbce-4e01-ae9e-261174997c48")],
                         ["Flags", V("as", ["write-without-response", "notify"])],
                         ["MTU", V("q", 498)], ["Value", V("ay", [])]]]]]]],
         serial=16, flags=NO_REPLY, reply_serial=3, destination=":1.7", sender=":1.3"),
    case("properties-changed-notification", SIGNAL, "sa{sv}as",
         ["org.bluez.GattCharacteristic1", [["Value", V("ay", [1, 0, 0, 6, 0, 0, 0, 0, 0xa0])]], []],
         serial=17, path=SMP_CHAR, interface="org.freedesktop.DBus.Properties", member="PropertiesChanged",
         sender=":1.3"),
    case("interfaces-removed", SIGNAL, "oas",
         ["/org/bluez/hci0/dev_AA_BB_CC_DD_EE_FF", ["org.bluez.Device1", "org.freedesktop.DBus.Properties"]],
         serial=18, path="/", interface="org.freedesktop.DBus.ObjectManager", member="InterfacesRemoved"),
    case("error-reply", ERROR, "s", ["Operation is not supported"], serial=19, flags=NO_REPLY,
         error_name="org.bluez.Error.NotSupported", reply_serial=9, destination=":1.7"),
    case("error-without-text", ERROR, serial=20, flags=NO_REPLY, error_name="org.bluez.Error.Failed",
         reply_serial=10),
    case("name-owner-changed", SIGNAL, "sss", ["org.bluez", ":1.3", ""], serial=21,
         path="/org/freedesktop/DBus", interface="org.freedesktop.DBus", member="NameOwnerChanged",
         sender="org.freedesktop.DBus"),
    case("no-auto-start-flags", CALL, serial=22, flags=2 | 4, path="/x", interface="a.b", member="M"),
    case("two-descriptors", RETURN, "hh", [1, 0], serial=23, flags=NO_REPLY, fds=2, reply_serial=1),
]


def to_dbus_fast(sig, value):
    from dbus_fast import Variant
    from dbus_fast.signature import get_signature_tree

    def convert(t, v):
        code = t.signature
        if code == "v":
            return Variant(v["sig"], convert(get_signature_tree(v["sig"]).types[0], v["value"]))
        if code == "d":
            return float(v)
        if code.startswith("a{"):
            key, val = t.children[0].children
            return {convert(key, k): convert(val, x) for k, x in v}
        if code == "ay":
            return bytes(v)
        if code.startswith("a"):
            return [convert(t.children[0], x) for x in v]
        if code.startswith("("):
            return [convert(c, x) for c, x in zip(t.children, v)]
        return v

    return [convert(t, v) for t, v in zip(get_signature_tree(sig).types, value)]


def dbus_fast_bytes(c):
    from dbus_fast import Message, MessageFlag, MessageType
    message = Message(
        message_type=MessageType(c["kind"]), flags=MessageFlag(c["flags"]), serial=c["serial"],
        destination=c.get("destination"), path=c.get("path"), interface=c.get("interface"),
        member=c.get("member"), error_name=c.get("error_name"), reply_serial=c.get("reply_serial"),
        sender=c.get("sender"), signature=c["sig"], body=to_dbus_fast(c["sig"], c["body"]),
        unix_fds=[0] * c["fds"])
    data = message._marshall(negotiate_unix_fd=True)
    # dbus-fast leaves out SENDER (the bus sets it on a real connection): the test reads which
    # sender the bytes carry from here rather than assuming.
    from dbus_fast._private.unmarshaller import Unmarshaller
    import io
    unmarshaller = Unmarshaller(io.BytesIO(data), negotiate_unix_fd=True)
    return data.hex(), unmarshaller.unmarshall().sender


def glib_variant(sig, value):
    from gi.repository import GLib

    # GLib builds a whole tuple from Python values; variants must be GLib.Variant objects.
    def plain(s, v):
        if s == "v":
            return GLib.Variant(v["sig"], plain(v["sig"], v["value"]))
        if s == "d":
            return float(v)
        if s == "h":
            return v
        if s.startswith("a{"):
            k, x = split(s[2:-1])
            return {plain(k, a): plain(x, b) for a, b in v}
        if s.startswith("a"):
            return [plain(s[1:], x) for x in v]
        if s.startswith("("):
            return tuple(plain(f, x) for f, x in zip(split(s[1:-1]), v))
        return v

    return GLib.Variant("(" + sig + ")", tuple(plain(s, v) for s, v in zip(split(sig), value)))


def split(sig):
    """The complete types of a signature (GLib's type iterator is awkward from Python)."""
    types, i = [], 0
    while i < len(sig):
        j = i
        while sig[j] == "a":
            j += 1
        if sig[j] in "({":
            depth, j = 0, j
            while True:
                depth += sig[j] in "({"
                depth -= sig[j] in ")}"
                j += 1
                if depth == 0:
                    break
        else:
            j += 1
        types.append(sig[i:j])
        i = j
    return types


def glib_bytes(c):
    import gi
    gi.require_version("Gio", "2.0")
    from gi.repository import Gio, GLib
    m = Gio.DBusMessage.new()
    m.set_message_type(Gio.DBusMessageType(c["kind"]))
    m.set_flags(Gio.DBusMessageFlags(c["flags"]))
    m.set_serial(c["serial"])
    for key, setter in [("destination", m.set_destination), ("path", m.set_path), ("interface", m.set_interface),
                        ("member", m.set_member), ("error_name", m.set_error_name), ("sender", m.set_sender)]:
        if c.get(key) is not None:
            setter(c[key])
    if c.get("reply_serial") is not None:
        m.set_reply_serial(c["reply_serial"])
    if c["sig"]:
        m.set_body(glib_variant(c["sig"], c["body"]))
    if c["fds"]:
        fds = Gio.UnixFDList.new()
        for _ in range(c["fds"]):
            fd = os.open("/dev/null", os.O_RDONLY)
            fds.append(fd)
            os.close(fd)
        m.set_unix_fd_list(fds)
    m.set_byte_order(Gio.DBusMessageByteOrder.BIG_ENDIAN)
    return bytes(m.to_blob(Gio.DBusCapabilityFlags.UNIX_FD_PASSING)).hex()


def main():
    if "--glib" in sys.argv:
        print(json.dumps({c["name"]: glib_bytes(c) for c in CASES}))
        return
    glib_python = os.environ.get("DBUS_VECTORS_GLIB_PYTHON", "/usr/bin/python3")
    big = json.loads(subprocess.run([glib_python, __file__, "--glib"], check=True, capture_output=True,
                                    text=True).stdout)
    out = {"generator": "dbus-fast 5.2.0 (little endian), GLib GDBusMessage (big endian)", "cases": []}
    for c in CASES:
        little, little_sender = dbus_fast_bytes(c)
        out["cases"].append({**c, "little": little, "little_sender": little_sender, "big": big[c["name"]]})
    text = json.dumps(out, indent=1, ensure_ascii=False) + "\n"
    if "--check" in sys.argv:
        sys.stdout.write(text)
    else:
        OUTPUT.write_text(text)
        print(f"wrote {len(CASES)} cases to {OUTPUT.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
