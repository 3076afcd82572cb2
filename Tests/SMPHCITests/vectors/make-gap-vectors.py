#!/usr/bin/env python3
"""Golden vectors for the SMPHCI GAP machines (LEScanner, LEConnector, LEAdvertiser, LinkTuning),
made with Bumble (PyPI `bumble`) as an independent implementation. This script only calls Bumble's
public classes and writes what they produce; no Bumble code is copied into the package.

Writes Tests/SMPHCITests/GAPVectors.swift (hex constants). Run from the repository root with a
Python that has Bumble installed:

    /work/main/.venv/bin/python Tests/SMPHCITests/vectors/make-gap-vectors.py

then `swift format -i --configuration .swift-format Tests/SMPHCITests/GAPVectors.swift`.

Two sources of bytes:
- commands and events built from Bumble's HCI classes (`bytes(packet)`);
- what two Bumble `Controller`s on one `LocalLink` answered when driven as our machines drive a
  controller: one advertises as LEAdvertiser does, the other scans and connects to it as LEScanner
  and LEConnector do, then asks for a longer data length as LinkTuning does; then it connects to an
  absent peer and cancels.
"""
import asyncio
import pathlib

from bumble import controller, core, hci
from bumble.link import LocalLink

import swift_vectors  # noqa: E402 (beside this script)

OUT = pathlib.Path(__file__).resolve().parent.parent / "GAPVectors.swift"

vectors: list[tuple[str, str, bytes]] = []


def add(name: str, what: str, data: bytes) -> None:
    vectors.append((name, what, bytes(data)))


SMP_SERVICE = core.UUID("8D53DC1D-1DB7-4CD3-868B-8A527460AA84")
ADVERTISER = hci.Address("C0:11:22:33:44:55", hci.Address.RANDOM_DEVICE_ADDRESS)
ABSENT = hci.Address("C4:F2:17:1A:1D:BB", hci.Address.RANDOM_DEVICE_ADDRESS)
ADVERTISING_DATA = bytes(
    core.AdvertisingData(
        [
            (core.AdvertisingData.FLAGS, bytes([0x06])),
            (core.AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, SMP_SERVICE.to_bytes()),
        ]
    )
)
SCAN_RESPONSE_DATA = bytes(core.AdvertisingData([(core.AdvertisingData.COMPLETE_LOCAL_NAME, b"swift-mcumgr")]))

# --- Commands -------------------------------------------------------------------------------------
ADVERTISING_PARAMETERS = hci.HCI_LE_Set_Advertising_Parameters_Command(
    advertising_interval_min=160,
    advertising_interval_max=160,
    advertising_type=0,
    own_address_type=1,
    peer_address_type=0,
    peer_address=hci.Address("00:00:00:00:00:00", hci.Address.PUBLIC_DEVICE_ADDRESS),
    advertising_channel_map=0x07,
    advertising_filter_policy=0,
)
add(
    "leSetAdvertisingParameters",
    "HCI_LE_Set_Advertising_Parameters_Command(160, 160 (100 ms), ADV_IND, own random, peer 0, channels 0x07, policy 0)",
    bytes(ADVERTISING_PARAMETERS),
)
add(
    "leSetAdvertisingParametersDirected",
    "HCI_LE_Set_Advertising_Parameters_Command(0x20, 0x30, ADV_DIRECT_IND low duty, own public, peer random "
    "C4:F2:17:1A:1D:BB, channels 0x05, policy 3)",
    bytes(
        hci.HCI_LE_Set_Advertising_Parameters_Command(
            advertising_interval_min=0x20,
            advertising_interval_max=0x30,
            advertising_type=4,
            own_address_type=0,
            peer_address_type=1,
            peer_address=ABSENT,
            advertising_channel_map=0x05,
            advertising_filter_policy=3,
        )
    ),
)
add(
    "leSetAdvertisingData",
    "HCI_LE_Set_Advertising_Data_Command(flags 0x06 + complete 128-bit SMP service)",
    bytes(hci.HCI_LE_Set_Advertising_Data_Command(advertising_data=ADVERTISING_DATA)),
)
add(
    "leSetAdvertisingDataEmpty",
    "HCI_LE_Set_Advertising_Data_Command(b'')",
    bytes(hci.HCI_LE_Set_Advertising_Data_Command(advertising_data=b"")),
)
add(
    "leSetScanResponseData",
    "HCI_LE_Set_Scan_Response_Data_Command(complete local name 'swift-mcumgr')",
    bytes(hci.HCI_LE_Set_Scan_Response_Data_Command(scan_response_data=SCAN_RESPONSE_DATA)),
)
add(
    "leSetAdvertisingEnable",
    "HCI_LE_Set_Advertising_Enable_Command(advertising_enable=1)",
    bytes(hci.HCI_LE_Set_Advertising_Enable_Command(advertising_enable=1)),
)
add(
    "leSetAdvertisingDisable",
    "HCI_LE_Set_Advertising_Enable_Command(advertising_enable=0)",
    bytes(hci.HCI_LE_Set_Advertising_Enable_Command(advertising_enable=0)),
)
add(
    "leSetDataLength",
    "HCI_LE_Set_Data_Length_Command(connection_handle=0x0040, tx_octets=251, tx_time=2120)",
    bytes(hci.HCI_LE_Set_Data_Length_Command(connection_handle=0x0040, tx_octets=251, tx_time=2120)),
)

# --- Events ---------------------------------------------------------------------------------------
add(
    "leDataLengthChange",
    "HCI_LE_Data_Length_Change_Event(0x0040, tx 251 / 2120 µs, rx 27 / 328 µs)",
    bytes(
        hci.HCI_LE_Data_Length_Change_Event(
            connection_handle=0x0040, max_tx_octets=251, max_tx_time=2120, max_rx_octets=27, max_rx_time=328
        )
    ),
)
add(
    "commandCompleteSetDataLength",
    "HCI_Command_Complete_Event(1, LE Set Data Length, (status 0, connection_handle 0x0040))",
    bytes(
        hci.HCI_Command_Complete_Event(
            num_hci_command_packets=1,
            command_opcode=hci.HCI_LE_SET_DATA_LENGTH_COMMAND,
            return_parameters=hci.HCI_LE_Set_Data_Length_Command.return_parameters_class(
                status=0, connection_handle=0x0040
            ),
        )
    ),
)


# --- Two Bumble controllers, one advertising, one scanning and connecting -------------------------
class Sink:
    def __init__(self) -> None:
        self.packets: list[bytes] = []

    def on_packet(self, packet: bytes) -> None:
        self.packets.append(bytes(packet))


async def drive(target: controller.Controller, sink: Sink, command: hci.HCI_Command, wait: float = 0.05) -> list[bytes]:
    before = len(sink.packets)
    target.on_packet(bytes(command))
    await asyncio.sleep(wait)
    return sink.packets[before:]


def record(prefix: str, what: str, packets: list[bytes]) -> None:
    for index, packet in enumerate(packets):
        add(f"{prefix}{index}", f"{what}, event {index + 1} of {len(packets)}", packet)


async def link_session() -> None:
    link = LocalLink()
    adv_sink, central_sink = Sink(), Sink()
    advertiser = controller.Controller("adv", host_sink=adv_sink, link=link, public_address="F0:00:00:00:00:01")
    central = controller.Controller("central", host_sink=central_sink, link=link, public_address="F0:00:00:00:00:02")
    for target, sink in ((advertiser, adv_sink), (central, central_sink)):
        await drive(target, sink, hci.HCI_Reset_Command())
    await drive(advertiser, adv_sink, hci.HCI_LE_Set_Random_Address_Command(random_address=ADVERTISER))
    steps = [
        ("AdvertiserParameters", "LE Set Advertising Parameters", ADVERTISING_PARAMETERS),
        ("AdvertiserData", "LE Set Advertising Data", hci.HCI_LE_Set_Advertising_Data_Command(advertising_data=ADVERTISING_DATA)),
        (
            "AdvertiserScanResponse",
            "LE Set Scan Response Data",
            hci.HCI_LE_Set_Scan_Response_Data_Command(scan_response_data=SCAN_RESPONSE_DATA),
        ),
        ("AdvertiserEnable", "LE Set Advertising Enable(1)", hci.HCI_LE_Set_Advertising_Enable_Command(advertising_enable=1)),
    ]
    for name, what, command in steps:
        record(f"bumble{name}", f"Bumble advertiser's answer to {what}", await drive(advertiser, adv_sink, command))
    record(
        "bumbleScanParameters",
        "Bumble central's answer to LE Set Scan Parameters(active, 0x60/0x30, own public)",
        await drive(
            central,
            central_sink,
            hci.HCI_LE_Set_Scan_Parameters_Command(
                le_scan_type=1, le_scan_interval=0x60, le_scan_window=0x30, own_address_type=0, scanning_filter_policy=0
            ),
        ),
    )
    # Scanning for a while: the answer, then two rounds of reports of the advertiser.
    scanning = await drive(
        central, central_sink, hci.HCI_LE_Set_Scan_Enable_Command(le_scan_enable=1, filter_duplicates=1), wait=0.25
    )
    record("bumbleScanEnable", "Bumble central's answer to LE Set Scan Enable(1, filter duplicates) and reports", scanning[:5])
    record(
        "bumbleScanDisable",
        "Bumble central's answer to LE Set Scan Enable(0)",
        [p for p in await drive(central, central_sink, hci.HCI_LE_Set_Scan_Enable_Command(le_scan_enable=0, filter_duplicates=0)) if p[1] == 0x0E],
    )
    create = hci.HCI_LE_Create_Connection_Command(
        le_scan_interval=0x60,
        le_scan_window=0x30,
        initiator_filter_policy=0,
        peer_address_type=1,
        peer_address=ADVERTISER,
        own_address_type=0,
        connection_interval_min=24,
        connection_interval_max=40,
        max_latency=0,
        supervision_timeout=400,
        min_ce_length=0,
        max_ce_length=0,
    )
    before = len(adv_sink.packets)
    record("bumbleCreateConnection", "Bumble central's answer to LE Create Connection(advertiser)", await drive(central, central_sink, create, wait=0.3))
    record("bumbleAdvertiserConnected", "Bumble advertiser's events when the central connected", adv_sink.packets[before:])
    record(
        "bumbleSetDataLength",
        "Bumble central's answer to LE Set Data Length(0x0001, 251, 2120)",
        await drive(central, central_sink, hci.HCI_LE_Set_Data_Length_Command(connection_handle=1, tx_octets=251, tx_time=2120)),
    )
    absent = hci.HCI_LE_Create_Connection_Command(
        le_scan_interval=0x60,
        le_scan_window=0x30,
        initiator_filter_policy=0,
        peer_address_type=1,
        peer_address=ABSENT,
        own_address_type=0,
        connection_interval_min=24,
        connection_interval_max=40,
        max_latency=0,
        supervision_timeout=400,
        min_ce_length=0,
        max_ce_length=0,
    )
    record("bumbleCreateConnectionAbsent", "Bumble central's answer to LE Create Connection(absent peer)", await drive(central, central_sink, absent, wait=0.3))
    record(
        "bumbleCreateConnectionCancel",
        "Bumble central's answer to LE Create Connection Cancel (and nothing after it in 0.5 s)",
        await drive(central, central_sink, hci.HCI_LE_Create_Connection_Cancel_Command(), wait=0.5),
    )


asyncio.run(link_session())


swift_vectors.write(
    OUT,
    "make-gap-vectors.py",
    "GAPVectors",
    "Bytes produced by Bumble {version} (PyPI `bumble`) for the GAP machines.",
    vectors,
    with_version=False,
    what="expression or controller",
)
