#!/usr/bin/env python3
"""Writes the committed seed corpora (Fuzz/Corpus/<target>/) and dictionaries (Fuzz/Dictionaries/)
from the repository's golden vectors: Tests/SMPCoreTests/Fixtures/golden-frames.jsonl,
Tests/SMPDBusTests/Fixtures/dbus-vectors.json (D-Bus messages by dbus-fast and GLib), the RFC 8949
Appendix A vectors in Tests/SMPCBORTests, the MCUboot fixtures made by imgtool
(Tests/MCUbootTests/Fixtures), and the wire keys declared in Sources/SMPCore/Groups.

Standard library only. Run from the repository root: python3 Fuzz/make-corpus.py
Deterministic: the same checkout gives the same files.
"""
import base64, hashlib, io, json, os, re, shutil, struct, zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "Fuzz", "Corpus")
DICT = os.path.join(ROOT, "Fuzz", "Dictionaries")
FIX = os.path.join(ROOT, "Tests", "MCUbootTests", "Fixtures")


def read(path):
    with open(os.path.join(ROOT, path), "rb") as f:
        return f.read()


def write(target, data):
    folder = os.path.join(OUT, target)
    os.makedirs(folder, exist_ok=True)
    # Named by content, as libFuzzer names its own corpus files.
    with open(os.path.join(folder, hashlib.sha1(data).hexdigest()), "wb") as f:
        f.write(data)


golden = [json.loads(l) for l in read("Tests/SMPCoreTests/Fixtures/golden-frames.jsonl").decode().splitlines() if l.strip()]
frames = [bytes.fromhex(g["hex"]) for g in golden]
requests = [bytes.fromhex(g["hex"]) for g in golden if g["kind"] == "request"]
responses = [bytes.fromhex(g["hex"]) for g in golden if g["kind"] != "request"]

# The request types in the order FuzzSMPFrame.swift lists them (files sorted, declaration order).
types = []
groups = os.path.join(ROOT, "Sources", "SMPCore", "Groups")
for name in sorted(os.listdir(groups)):
    text = open(os.path.join(groups, name)).read()
    enum = re.search(r"^public enum ([A-Za-z]+)", text, re.M)
    for m in re.finditer(r"^    public struct ([A-Za-z]+)(<[^>]*>)?: SMP(Read|Write)Request", text, re.M):
        types.append(enum.group(1) + "." + m.group(1))

for target in ["cbor", "smp-frame", "raw-deframer", "console-deframer", "ble-reassembly", "mcuboot-image", "package",
               "simulator", "url", "dbus-message", "att", "hci"]:
    shutil.rmtree(os.path.join(OUT, target), ignore_errors=True)

# dbus-message: every D-Bus golden message in both byte orders, alone and two back to back, behind
# the target's three control bytes (chunk size, chunk seed).
dbus = json.loads(read("Tests/SMPDBusTests/Fixtures/dbus-vectors.json").decode())["cases"]
for i, case in enumerate(dbus):
    little, big = bytes.fromhex(case["little"]), bytes.fromhex(case["big"])
    write("dbus-message", bytes([i % 16, 0x5a, i & 0xff]) + little)
    write("dbus-message", bytes([(i + 3) % 16, 0xa5, i & 0xff]) + big)
    write("dbus-message", bytes([i % 4, 0x11, i & 0xff]) + little + bytes.fromhex(dbus[(i + 1) % len(dbus)]["little"]))
write("dbus-message", bytes([0, 0, 0]) + b"OK 0123456789abcdef0123456789abcdef\nAGREE_UNIX_FD\n")

# cbor: every golden payload, the RFC 8949 Appendix A vectors, the SUIT example.
for frame in frames:
    if len(frame) > 8:
        write("cbor", frame[8:])
for m in re.finditer(r'hex: "([0-9a-f]+)"', read("Tests/SMPCBORTests/RFC8949AppendixATests.swift").decode()):
    write("cbor", bytes.fromhex(m.group(1)))
write("cbor", read("Tests/MCUbootTests/Fixtures/rfc9124_example0.suit"))

# smp-frame: the selector byte names the golden frame's own request type.
for g, frame in zip(golden, frames):
    name = re.sub(r"\.Response$", "", g["name"])
    selector = types.index(name) if name in types else 0
    write("smp-frame", bytes([selector]) + frame)

# raw-deframer / ble-reassembly: streams of golden frames, some with line noise between them.
for i in range(0, len(frames), 8):
    chunk = frames[i:i + 8]
    write("raw-deframer", bytes([i & 0xff, 0x5a, 0x20]) + b"".join(chunk))
    write("raw-deframer", bytes([i & 0xff, 0xa5, 0x03]) + b"\xff\x00".join(chunk) + b"\xe0")
    write("ble-reassembly", bytes([i % 8 * 32, 0x11, i & 0xff]) + b"".join(chunk))


def crc16_xmodem(data):
    crc = 0
    for byte in data:
        crc ^= byte << 8
        for _ in range(8):
            crc = ((crc << 1) ^ 0x1021) if crc & 0x8000 else crc << 1
            crc &= 0xffff
    return crc


def console(message, line=127):
    packet = struct.pack(">H", len(message) + 2) + message + struct.pack(">H", crc16_xmodem(message))
    text = base64.b64encode(packet)
    per = max(4, (line - 3) // 4 * 4)
    out = b""
    for start in range(0, len(text), per):
        out += (b"\x06\x09" if start == 0 else b"\x04\x14") + text[start:start + per] + b"\n"
    return out


# console-deframer: console packets between log lines, as a Zephyr console shows them.
for i in range(0, len(frames), 8):
    chunk = frames[i:i + 8]
    stream = b"".join(b"[00:00:0%d.000,000] <inf> app: booting\r\n" % (j % 10) + console(f, 30 + 10 * j)
                      for j, f in enumerate(chunk))
    write("console-deframer", bytes([i & 0xff, 0x33, 0x40]) + stream)
write("console-deframer", b"\x01\x02\x80" + console(frames[0]) + b"uart:~$ " + console(frames[1])[:20] + b"\n")

# mcuboot-image: the imgtool images.
for name in ["unsigned.bin", "ecdsa_p256_protected.bin", "ed25519_pure.bin", "padded_confirmed.bin"]:
    write("mcuboot-image", read(os.path.join(FIX, name)))

# package: 0 whole files, 1 manifests, 2 SUIT envelopes, 3 zips built by the target.
with zipfile.ZipFile(os.path.join(FIX, "dfu_application.zip")) as z:
    manifest = z.read("manifest.json")
for name in ["dfu_application.zip", "unsigned.bin", "ecdsa_p256_protected.bin", "rfc9124_example0.suit"]:
    write("package", b"\x00" + read(os.path.join(FIX, name)))
write("package", b"\x01" + manifest)
sysbuild = json.dumps({"format-version": 1, "time": 1, "name": "sysbuild", "files": [
    {"type": "application", "board": "nrf5340dk", "soc": "nrf5340", "load_address": 0, "image_index": "0",
     "slot_index_primary": "1", "slot_index_secondary": "2", "version_MCUBOOT": "1.2.3+4", "size": 1576,
     "file": "app.signed.bin", "modtime": 1},
    {"type": "application", "image_index": "1", "slot": 1, "version_MCUBOOT+XIP": "1.0.0", "file": "net.bin"}]}).encode()
write("package", b"\x01" + sysbuild)
write("package", b"\x02" + read(os.path.join(FIX, "rfc9124_example0.suit")))
write("package", b"\x03" + manifest + b"\xff" + b"app_update.bin" + b"\xff" + b"\x01")
write("package", b"\x03" + sysbuild + b"\xffapp.signed.bin\xff\x02\xffnet.bin\xff\x03")

# simulator: the golden requests in runs, under several device configurations (two bytes: swap;
# two images on swap; Zephyr latest with legacy codes; single slot started in serial recovery
# with its optional commands; the firmware loader; RAM load).
for i in range(0, len(requests), 10):
    for config in (b"\x00\x00", b"\x09\x00", b"\x92\x00", b"\x07\x0c", b"\x00\x01", b"\x06\x00"):
        write("simulator", config + b"".join(requests[i:i + 10]))

# url: connection strings, a profiles file, simulator options, versions.
for url in ["udp://192.168.1.10:1337", "udp://[::1]:1337", "udp://fe80::1", "serial:///dev/ttyACM0?baud=115200",
            "serial:///dev/ttyUSB0?baud=1000000&framing=raw&mtu=512", "ble://Zephyr%20Device?psm=235",
            "sim://?images=2&mode=swap", "sim://device?mode=direct-xip-revert&seed=0x10&buffers=0"]:
    write("url", b"\x00" + url.encode())
write("url", b"\x01" + json.dumps({"lab": "udp://10.0.0.2", "dk": "serial:///dev/ttyACM0?framing=raw"}).encode())
write("url", b"\x02images=2&mode=overwrite&version=1.2.3+4&zephyr=latest&boot_ms=0")
write("url", b"\x02mode=single-slot&recovery=1&recovery_echo=1&direct_upload=1&flash_align=4&no_app_recovery=1")
for version in ["1", "1.2", "1.2.3", "1.2.3+7", "1.2.3.7", " 255.255.65535+4294967295 "]:
    write("url", b"\x03" + version.encode())

# Dictionaries: CBOR heads and SMP's wire keys as CBOR text strings, SMP headers.
keys = set()
for name in os.listdir(groups):
    keys.update(re.findall(r'case [a-zA-Z]+ = "([^"]+)"', open(os.path.join(groups, name)).read()))
keys.update(["rc", "rsn", "err", "group", "ret", "o", "d", "r"])


def escape(data):
    return "".join("\\x%02x" % b if b < 0x20 or b >= 0x7f or b in (0x22, 0x5c) else chr(b) for b in data)


def text_key(key):
    data = key.encode()
    head = bytes([0x60 | len(data)]) if len(data) < 24 else bytes([0x78, len(data)])
    return head + data


cbor_heads = [b"\xa0", b"\xa1", b"\xa2", b"\xbf", b"\xff", b"\x9f", b"\x5f", b"\x7f", b"\x80", b"\x81",
              b"\xf4", b"\xf5", b"\xf6", b"\xf7", b"\xf8\x20", b"\xf9\x7c\x00", b"\xf9\x7e\x00", b"\xfa\x7f\x80\x00\x00",
              b"\xfb\x7f\xf8\x00\x00\x00\x00\x00\x00", b"\x18\x18", b"\x19\x01\x00", b"\x1a\x00\x01\x00\x00",
              b"\x1b\xff\xff\xff\xff\xff\xff\xff\xff", b"\x3b\xff\xff\xff\xff\xff\xff\xff\xff", b"\x58\x20", b"\x59\x01\x00",
              b"\x78\x20", b"\xd8\x6b", b"\xd8\x18", b"\xc1", b"\xd9\xd9\xf7", b"\x1c", b"\xfc"]
os.makedirs(DICT, exist_ok=True)
with open(os.path.join(DICT, "cbor.dict"), "w") as f:
    f.write("# CBOR heads (maps, arrays, indefinite starts, break, floats, long arguments, tags) and SMP's\n"
            "# wire keys as text strings. Generated by Fuzz/make-corpus.py.\n")
    for i, head in enumerate(cbor_heads):
        f.write(f'head{i}="{escape(head)}"\n')
    for key in sorted(keys):
        f.write(f'key_{re.sub("[^A-Za-z0-9]", "_", key)}="{escape(text_key(key))}"\n')
with open(os.path.join(DICT, "smp.dict"), "w") as f:
    f.write("# SMP headers (v1/v2 read/write requests and responses of common groups), console markers and the\n"
            "# CBOR dictionary. Generated by Fuzz/make-corpus.py.\n")
    for op in range(4):
        for version in (0, 1):
            f.write(f'hdr_v{version + 1}_op{op}="{escape(bytes([version << 3 | op, 0]))}"\n')
    for group in (0, 1, 2, 3, 8, 9, 10, 63, 64):
        f.write(f'group_{group}="{escape(struct.pack(">H", group))}"\n')
    f.write('start_marker="\\x06\\x09"\ncontinuation_marker="\\x04\\x14"\n')
    for i, head in enumerate(cbor_heads):
        f.write(f'head{i}="{escape(head)}"\n')
    for key in sorted(keys):
        f.write(f'key_{re.sub("[^A-Za-z0-9]", "_", key)}="{escape(text_key(key))}"\n')
with open(os.path.join(DICT, "dbus.dict"), "w") as f:
    f.write("# D-Bus: byte orders, message types, header field codes with their variant signatures, type\n"
            "# codes and the names BlueZ traffic carries. Generated by Fuzz/make-corpus.py.\n")
    f.write('little="l"\nbig="B"\n')
    for code, sig in [(1, "o"), (2, "s"), (3, "s"), (4, "s"), (5, "u"), (6, "s"), (7, "s"), (8, "g"), (9, "u")]:
        f.write(f'field{code}="{escape(bytes([code, 1, ord(sig), 0]))}"\n')
    for i, sig in enumerate(["a{sv}", "a{oa{sa{sv}}}", "(yv)", "aya{sv}", "hq", "sa{sv}as", "v", "av", "ay", "a(yv)"]):
        f.write(f'sig{i}="{escape(bytes([len(sig)]) + sig.encode() + bytes([0]))}"\n')
    for i, name in enumerate(["org.bluez", "org.bluez.GattCharacteristic1", "org.freedesktop.DBus.Properties",
                              "PropertiesChanged", "WriteValue", "Value", "/org/bluez/hci0"]):
        f.write(f'name{i}="{escape(struct.pack("<I", len(name)) + name.encode() + bytes([0]))}"\n')
    for value in [0, 1, 0xFFFFFFFF, 0x04000000, 0x08000000]:
        f.write(f'u32_{value:x}="{escape(struct.pack("<I", value))}"\n')


# att and hci: the Bumble golden vectors of Tests/SMPHCITests (ATT PDUs and GATT server answers;
# H4 commands, events and ACL packets).
def swift_hex_constants(path):
    text = read(path).decode()
    found = {}
    for m in re.finditer(r'static let (\w+) = (?:"([0-9a-f]*)"|"""\n(.*?)""")', text, re.S):
        found[m.group(1)] = bytes.fromhex(m.group(2) if m.group(2) is not None else re.sub(r"\s", "", m.group(3)))
    return found


att_vectors = swift_hex_constants("Tests/SMPHCITests/ATTVectors.swift")
hci_vectors = swift_hex_constants("Tests/SMPHCITests/BumbleVectors.swift")


def pdus(*items):
    return b"".join(bytes([len(item)]) + item for item in items)


# Target input: MTU byte, setup step, then length-prefixed PDUs.
for i, (name, pdu) in enumerate(sorted(att_vectors.items())):
    write("att", bytes([(i * 37) & 0xFF, i % 7]) + pdus(pdu))
order = ["setupMTUAnswer", "setupServiceAnswer", "setupCharacteristicsAnswer", "setupCharacteristicsMoreAnswer",
         "setupDescriptorsAnswer", "setupSubscribeAnswer"]
write("att", bytes([0xEB, 0]) + pdus(*[att_vectors[n] for n in order]) + pdus(att_vectors["serverNotification"]))
for step in range(7):
    write("att", bytes([0x10, step]) + pdus(att_vectors["exchangeMTURequest"], att_vectors["mtu23ServicesRequest"],
                                            att_vectors["handleValueIndication"], att_vectors["serverNotification"]))


def h4_length(data):
    if data[:1] == b"\x01" and len(data) >= 4:
        return 4 + data[3]
    if data[:1] == b"\x02" and len(data) >= 5:
        return 5 + struct.unpack_from("<H", data, 3)[0]
    if data[:1] == b"\x04" and len(data) >= 3:
        return 3 + data[2]
    return -1


h4 = [data for _, data in sorted(hci_vectors.items()) if h4_length(data) == len(data)]
for i, data in enumerate(h4):
    write("hci", bytes([i & 0xFF, 0x40]) + data)
for name, pdu in sorted(att_vectors.items()):
    l2cap = struct.pack("<HH", len(pdu), 4) + pdu
    write("hci", bytes([len(pdu) & 0xFF, 0x11]) + b"\x02" + struct.pack("<HH", 0x0040, len(l2cap)) + l2cap)
write("hci", b"\x00\x07" + b"".join(h4))
with open(os.path.join(DICT, "att.dict"), "w") as f:
    f.write("# ATT opcodes with handle 0x0007, the GATT UUIDs (2800, 2803, 2902, SMP service and\n"
            "# characteristic, least significant byte first), H4 indicators and the L2CAP ATT header.\n"
            "# Generated by Fuzz/make-corpus.py.\n")
    for op in [0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0A, 0x0B, 0x0C, 0x0D, 0x10, 0x11, 0x12, 0x13,
               0x1B, 0x1D, 0x1E, 0x52, 0xD2]:
        f.write(f'op_{op:02x}="{escape(bytes([op, 0x07, 0x00]))}"\n')
    for uuid in [0x2800, 0x2803, 0x2902, 0x1800, 0x1801, 0x2A00]:
        f.write(f'uuid_{uuid:04x}="{escape(struct.pack("<H", uuid))}"\n')
    f.write(f'smp_service="{escape(bytes.fromhex("84aa6074528a8b86d34cb71d1ddc538d"))}"\n')
    f.write(f'smp_characteristic="{escape(bytes.fromhex("487c997411269eae014ecefb28782eda"))}"\n')
    f.write('range_all="\\x01\\x00\\xff\\xff"\nl2cap_att="\\x04\\x00"\nacl_0040="\\x02\\x40\\x00"\nevent_le="\\x04\\x3e"\n')

print("corpora:", {t: len(os.listdir(os.path.join(OUT, t))) for t in sorted(os.listdir(OUT))})
