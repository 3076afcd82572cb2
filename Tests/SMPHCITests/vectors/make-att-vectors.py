#!/usr/bin/env python3
"""Golden vectors for the SMPHCI ATT and GATT tests, made with Bumble (PyPI `bumble`, Google's
Python Bluetooth stack) as an independent implementation. Ours: this script only calls Bumble's
public classes and writes what they produce; no Bumble code is copied into the package.

Writes Tests/SMPHCITests/ATTVectors.swift (hex constants). Run from the repository root with a
Python that has Bumble installed:

    /work/main/.venv/bin/python Tests/SMPHCITests/vectors/make-att-vectors.py

then `swift format -i --configuration .swift-format Tests/SMPHCITests/ATTVectors.swift`.

Two sources of bytes:
- one PDU of every kind the package decodes, built from Bumble's `bumble.att` classes;
- the answers of Bumble's own GATT server (`bumble.gatt_server.Server`) holding the database our
  GATTServer holds (GAP with Device Name, GATT, the SMP service with its characteristic, whose CCCD
  Bumble adds), to the requests our GATTClientSetup sends and to a few more. The server runs on a
  stand-in bearer and device (only what the server touches: a handle, the MTU, the link's security
  flags, and a sink for the PDUs it sends).
"""
import asyncio
import pathlib

from bumble import att, core, gatt, gatt_server

import swift_vectors  # noqa: E402 (beside this script)

OUT = pathlib.Path(__file__).resolve().parent.parent / "ATTVectors.swift"

vectors: list[tuple[str, str, bytes]] = []


def add(name: str, what: str, data: bytes) -> None:
    vectors.append((name, what, bytes(data)))


SMP_SERVICE = core.UUID("8D53DC1D-1DB7-4CD3-868B-8A527460AA84")
SMP_CHARACTERISTIC = core.UUID("DA2E7828-FBCE-4E01-AE9E-261174997C48")
u16 = core.UUID.from_16_bits

# --- One PDU of every kind ------------------------------------------------------------------------
PDUS = [
    ("errorResponse", "ATT_Error_Response(request 0x12, handle 0x0008, 0x05 insufficient authentication)",
     att.ATT_Error_Response(request_opcode_in_error=0x12, attribute_handle_in_error=0x0008, error_code=0x05)),
    ("exchangeMTURequest", "ATT_Exchange_MTU_Request(client_rx_mtu=498)", att.ATT_Exchange_MTU_Request(client_rx_mtu=498)),
    ("exchangeMTUResponse", "ATT_Exchange_MTU_Response(server_rx_mtu=247)", att.ATT_Exchange_MTU_Response(server_rx_mtu=247)),
    ("findInformationRequest", "ATT_Find_Information_Request(0x0008, 0x000A)",
     att.ATT_Find_Information_Request(starting_handle=0x0008, ending_handle=0x000A)),
    ("findInformationResponse16", "ATT_Find_Information_Response(format 1: 0x0008 2902, 0x0009 2901)",
     att.ATT_Find_Information_Response(format=1, information_data=bytes.fromhex("0800022909000129"))),
    ("findInformationResponse128", "ATT_Find_Information_Response(format 2: 0x0007 SMP characteristic)",
     att.ATT_Find_Information_Response(format=2, information_data=bytes.fromhex("0700") + SMP_CHARACTERISTIC.to_bytes())),
    ("findByTypeValueRequest", "ATT_Find_By_Type_Value_Request(0x0001, 0xFFFF, 0x2800, SMP service)",
     att.ATT_Find_By_Type_Value_Request(starting_handle=1, ending_handle=0xFFFF, attribute_type=u16(0x2800),
                                        attribute_value=SMP_SERVICE.to_bytes())),
    ("findByTypeValueResponse", "ATT_Find_By_Type_Value_Response([(0x0005, 0x0008), (0x0010, 0x0014)])",
     att.ATT_Find_By_Type_Value_Response(handles_information_list=bytes.fromhex("0500080010001400"))),
    ("readByTypeRequest16", "ATT_Read_By_Type_Request(0x0005, 0x0008, 0x2803)",
     att.ATT_Read_By_Type_Request(starting_handle=5, ending_handle=8, attribute_type=u16(0x2803))),
    ("readByTypeRequest128", "ATT_Read_By_Type_Request(0x0001, 0xFFFF, SMP characteristic)",
     att.ATT_Read_By_Type_Request(starting_handle=1, ending_handle=0xFFFF, attribute_type=SMP_CHARACTERISTIC)),
    ("readByTypeResponse", "ATT_Read_By_Type_Response(length 7: 0x0002 02 0300 002A, 0x0009 10 0A00 292A)",
     att.ATT_Read_By_Type_Response(length=7, attribute_data_list=bytes.fromhex("020002030000" "2a" "0900100a00292a"))),
    ("readRequest", "ATT_Read_Request(0x0003)", att.ATT_Read_Request(attribute_handle=3)),
    ("readResponse", "ATT_Read_Response('Zephyr')", att.ATT_Read_Response(attribute_value=b"Zephyr")),
    ("readBlobRequest", "ATT_Read_Blob_Request(0x0003, offset 22)", att.ATT_Read_Blob_Request(attribute_handle=3, value_offset=22)),
    ("readBlobResponse", "ATT_Read_Blob_Response('SMP')", att.ATT_Read_Blob_Response(part_attribute_value=b"SMP")),
    ("readByGroupTypeRequest", "ATT_Read_By_Group_Type_Request(0x0001, 0xFFFF, 0x2800)",
     att.ATT_Read_By_Group_Type_Request(starting_handle=1, ending_handle=0xFFFF, attribute_group_type=u16(0x2800))),
    ("readByGroupTypeResponse", "ATT_Read_By_Group_Type_Response(length 6: 0x0001–0x0003 1800, 0x0004–0x0004 1801)",
     att.ATT_Read_By_Group_Type_Response(length=6, attribute_data_list=bytes.fromhex("010003000018" "040004000118"))),
    ("writeRequest", "ATT_Write_Request(0x0008, 0100)", att.ATT_Write_Request(attribute_handle=8, attribute_value=b"\x01\x00")),
    ("writeResponse", "ATT_Write_Response()", att.ATT_Write_Response()),
    ("writeCommand", "ATT_Write_Command(0x0007, 0800000800010000)",
     att.ATT_Write_Command(attribute_handle=7, attribute_value=bytes.fromhex("0800000800010000"))),
    ("handleValueNotification", "ATT_Handle_Value_Notification(0x0007, 0900000200010000a0)",
     att.ATT_Handle_Value_Notification(attribute_handle=7, attribute_value=bytes.fromhex("0900000200010000a0"))),
    ("handleValueIndication", "ATT_Handle_Value_Indication(0x0007, 01020304)",
     att.ATT_Handle_Value_Indication(attribute_handle=7, attribute_value=bytes.fromhex("01020304"))),
    ("handleValueConfirmation", "ATT_Handle_Value_Confirmation()", att.ATT_Handle_Value_Confirmation()),
    ("prepareWriteRequest", "ATT_Prepare_Write_Request(0x0003, offset 0, 'ab') (no case of its own: unknown)",
     att.ATT_Prepare_Write_Request(attribute_handle=3, value_offset=0, part_attribute_value=b"ab")),
    ("signedWriteCommand", "ATT_Signed_Write_Command(0x0007, 'ab') (Bumble writes no signature; unknown command)",
     att.ATT_Signed_Write_Command(attribute_handle=7, attribute_value=b"ab")),
]
for name, what, pdu in PDUS:
    add(name, what, bytes(pdu))


# --- Bumble's GATT server -------------------------------------------------------------------------
class StandInDevice:
    """What Server touches of a Device: the sink of the PDUs it sends."""

    def __init__(self) -> None:
        self.sent: list[bytes] = []

    def send_l2cap_pdu(self, handle: int, cid: int, pdu: bytes) -> None:
        assert cid == att.ATT_CID
        self.sent.append(bytes(pdu))


class StandInBearer:
    """What Server touches of a Connection (the LE ACL bearer)."""

    handle = 0x0040
    encryption = 0
    authenticated = False

    def __init__(self) -> None:
        self.att_mtu = att.ATT_DEFAULT_MTU

    def on_att_mtu_update(self, mtu: int) -> None:
        self.att_mtu = mtu


def make_server() -> tuple[gatt_server.Server, StandInDevice, gatt.Characteristic]:
    device = StandInDevice()
    server = gatt_server.Server(device)
    name = gatt.Characteristic(
        gatt.GATT_DEVICE_NAME_CHARACTERISTIC, gatt.Characteristic.Properties.READ,
        gatt.Characteristic.READABLE, b"Zephyr SMP simulator",
    )
    smp = gatt.Characteristic(
        SMP_CHARACTERISTIC,
        gatt.Characteristic.Properties.WRITE_WITHOUT_RESPONSE | gatt.Characteristic.Properties.WRITE
        | gatt.Characteristic.Properties.NOTIFY,
        gatt.Characteristic.WRITEABLE, b"",
    )
    server.add_services([
        gatt.Service(gatt.GATT_GENERIC_ACCESS_SERVICE, [name]),
        gatt.Service(gatt.GATT_GENERIC_ATTRIBUTE_SERVICE, []),
        gatt.Service(SMP_SERVICE, [smp]),
    ])
    return server, device, smp


async def exchange(server, device, bearer, name: str, what: str, request: bytes) -> bytes:
    before = len(device.sent)
    server.on_gatt_pdu(bearer, att.ATT_PDU.from_bytes(request))
    await asyncio.sleep(0.01)
    answers = device.sent[before:]
    assert len(answers) == 1, f"{name}: {len(answers)} answers"
    add(name + "Request", what, request)
    add(name + "Answer", "Bumble GATT server's answer to " + what, answers[0])
    return answers[0]


# The requests our GATTClientSetup sends, in order, against Bumble's server.
SETUP = [
    ("setupMTU", "ATT_Exchange_MTU_Request(498)", att.ATT_Exchange_MTU_Request(client_rx_mtu=498)),
    ("setupService", "ATT_Find_By_Type_Value_Request(0x0001-0xFFFF, 0x2800, SMP service)",
     att.ATT_Find_By_Type_Value_Request(starting_handle=1, ending_handle=0xFFFF, attribute_type=u16(0x2800),
                                        attribute_value=SMP_SERVICE.to_bytes())),
    ("setupCharacteristics", "ATT_Read_By_Type_Request(0x0005-0x0008, 0x2803)",
     att.ATT_Read_By_Type_Request(starting_handle=5, ending_handle=8, attribute_type=u16(0x2803))),
    ("setupCharacteristicsMore", "ATT_Read_By_Type_Request(0x0007-0x0008, 0x2803)",
     att.ATT_Read_By_Type_Request(starting_handle=7, ending_handle=8, attribute_type=u16(0x2803))),
    ("setupDescriptors", "ATT_Find_Information_Request(0x0008-0x0008)",
     att.ATT_Find_Information_Request(starting_handle=8, ending_handle=8)),
    ("setupSubscribe", "ATT_Write_Request(0x0008, 0100)", att.ATT_Write_Request(attribute_handle=8, attribute_value=b"\x01\x00")),
]

# Requests at the default MTU of 23, before any exchange: how answers are cut to fit.
DEFAULT_MTU = [
    ("mtu23Services", "ATT_Read_By_Group_Type_Request(0x0001-0xFFFF, 0x2800) at MTU 23",
     att.ATT_Read_By_Group_Type_Request(starting_handle=1, ending_handle=0xFFFF, attribute_group_type=u16(0x2800))),
    ("mtu23ServicesAfterGAP", "ATT_Read_By_Group_Type_Request(0x0004-0xFFFF, 0x2800) at MTU 23",
     att.ATT_Read_By_Group_Type_Request(starting_handle=4, ending_handle=0xFFFF, attribute_group_type=u16(0x2800))),
    ("mtu23ServicesAfterGATT", "ATT_Read_By_Group_Type_Request(0x0005-0xFFFF, 0x2800) at MTU 23",
     att.ATT_Read_By_Group_Type_Request(starting_handle=5, ending_handle=0xFFFF, attribute_group_type=u16(0x2800))),
    ("mtu23ServicesEnd", "ATT_Read_By_Group_Type_Request(0x0009-0xFFFF, 0x2800) at MTU 23",
     att.ATT_Read_By_Group_Type_Request(starting_handle=9, ending_handle=0xFFFF, attribute_group_type=u16(0x2800))),
    ("mtu23Characteristics", "ATT_Read_By_Type_Request(0x0001-0xFFFF, 0x2803) at MTU 23",
     att.ATT_Read_By_Type_Request(starting_handle=1, ending_handle=0xFFFF, attribute_type=u16(0x2803))),
    ("mtu23Information", "ATT_Find_Information_Request(0x0001-0xFFFF) at MTU 23",
     att.ATT_Find_Information_Request(starting_handle=1, ending_handle=0xFFFF)),
    ("mtu23InformationSMP", "ATT_Find_Information_Request(0x0007-0xFFFF) at MTU 23",
     att.ATT_Find_Information_Request(starting_handle=7, ending_handle=0xFFFF)),
    ("mtu23ReadName", "ATT_Read_Request(0x0003) at MTU 23", att.ATT_Read_Request(attribute_handle=3)),
    ("mtu23ReadNameBlob", "ATT_Read_Blob_Request(0x0003, offset 22) at MTU 23",
     att.ATT_Read_Blob_Request(attribute_handle=3, value_offset=22)),
    ("mtu23ReadNameBlobShort", "ATT_Read_Blob_Request(0x0003, offset 2) at MTU 23 (the value fits one Read Response)",
     att.ATT_Read_Blob_Request(attribute_handle=3, value_offset=2)),
    ("mtu23ReadInvalid", "ATT_Read_Request(0x0009) at MTU 23", att.ATT_Read_Request(attribute_handle=9)),
    ("mtu23WriteInvalid", "ATT_Write_Request(0x0020, 00) at MTU 23", att.ATT_Write_Request(attribute_handle=0x20, attribute_value=b"\x00")),
    ("mtu23GroupTypeCharacteristic", "ATT_Read_By_Group_Type_Request(0x0001-0xFFFF, 0x2803) at MTU 23",
     att.ATT_Read_By_Group_Type_Request(starting_handle=1, ending_handle=0xFFFF, attribute_group_type=u16(0x2803))),
    ("mtu23PrepareWrite", "ATT_Prepare_Write_Request(0x0003, 0, 'ab') at MTU 23",
     att.ATT_Prepare_Write_Request(attribute_handle=3, value_offset=0, part_attribute_value=b"ab")),
    ("mtu23FindDeviceName", "ATT_Find_By_Type_Value_Request(0x0001-0xFFFF, 0x2800, 1800) at MTU 23",
     att.ATT_Find_By_Type_Value_Request(starting_handle=1, ending_handle=0xFFFF, attribute_type=u16(0x2800),
                                        attribute_value=bytes.fromhex("0018"))),
    ("mtu23FindNothing", "ATT_Find_By_Type_Value_Request(0x0001-0xFFFF, 0x2800, 180D) at MTU 23",
     att.ATT_Find_By_Type_Value_Request(starting_handle=1, ending_handle=0xFFFF, attribute_type=u16(0x2800),
                                        attribute_value=bytes.fromhex("0d18"))),
]


async def bumble_server() -> None:
    server, device, smp = make_server()
    bearer = StandInBearer()
    for name, what, pdu in DEFAULT_MTU:
        await exchange(server, device, bearer, name, what, bytes(pdu))
    for name, what, pdu in SETUP:
        await exchange(server, device, bearer, name, what, bytes(pdu))
    assert bearer.att_mtu == 498, bearer.att_mtu
    before = len(device.sent)
    await server.notify_subscriber(bearer, smp, bytes.fromhex("0900000200010000a0"), force=True)
    assert len(device.sent) == before + 1
    add("serverNotification", "Bumble GATT server's notification of the SMP characteristic, value 0900000200010000a0",
        device.sent[-1])


asyncio.run(bumble_server())


swift_vectors.write(
    OUT,
    "make-att-vectors.py",
    "ATTVectors",
    "ATT PDUs and GATT server answers produced by Bumble {version} (PyPI `bumble`).",
    vectors,
    with_version=True,
    what="expression",
)
