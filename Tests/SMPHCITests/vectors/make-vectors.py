#!/usr/bin/env python3
"""Golden vectors for the SMPHCI tests, made with Bumble (PyPI `bumble`, Google's Python Bluetooth
stack) as an independent implementation. Ours: this script only calls Bumble's public classes and
writes what they produce; no Bumble code is copied into the package.

Writes Tests/SMPHCITests/BumbleVectors.swift (hex constants). Run from the repository root with a
Python that has Bumble installed:

    /work/main/.venv/bin/python Tests/SMPHCITests/vectors/make-vectors.py

then `swift format -i --configuration .swift-format Tests/SMPHCITests/BumbleVectors.swift`.

Three sources of bytes:
- packets built from Bumble's HCI, L2CAP and ATT classes (`bytes(packet)`);
- the answers of a Bumble `Controller` to the bring-up commands (its own Command Complete events,
  with the supported-commands bitmap and buffer sizes it announces);
- advertising data built with `bumble.core.AdvertisingData`.
"""
import asyncio
import pathlib

from bumble import att, controller, core, hci, l2cap

import swift_vectors  # noqa: E402 (beside this script)

OUT = pathlib.Path(__file__).resolve().parent.parent / "BumbleVectors.swift"

vectors: list[tuple[str, str, bytes]] = []


def add(name: str, what: str, data: bytes) -> None:
    vectors.append((name, what, bytes(data)))


SMP_SERVICE = core.UUID("8D53DC1D-1DB7-4CD3-868B-8A527460AA84")
PEER = hci.Address("C4:F2:17:1A:1D:BB", hci.Address.RANDOM_DEVICE_ADDRESS)
OWN_RANDOM = hci.Address("C0:11:22:33:44:55", hci.Address.RANDOM_DEVICE_ADDRESS)

# --- Commands -------------------------------------------------------------------------------------
add("reset", "HCI_Reset_Command()", bytes(hci.HCI_Reset_Command()))
add(
    "readLocalVersion",
    "HCI_Read_Local_Version_Information_Command()",
    bytes(hci.HCI_Read_Local_Version_Information_Command()),
)
add(
    "readLocalSupportedCommands",
    "HCI_Read_Local_Supported_Commands_Command()",
    bytes(hci.HCI_Read_Local_Supported_Commands_Command()),
)
add("readBDADDR", "HCI_Read_BD_ADDR_Command()", bytes(hci.HCI_Read_BD_ADDR_Command()))
add("readBufferSize", "HCI_Read_Buffer_Size_Command()", bytes(hci.HCI_Read_Buffer_Size_Command()))
add("leReadBufferSize", "HCI_LE_Read_Buffer_Size_Command()", bytes(hci.HCI_LE_Read_Buffer_Size_Command()))
add(
    "leReadBufferSizeV2",
    "HCI_LE_Read_Buffer_Size_V2_Command()",
    bytes(hci.HCI_LE_Read_Buffer_Size_V2_Command()),
)
# The masks our bring-up sets: Disconnection Complete, Encryption Change, Hardware Error, Data
# Buffer Overflow, Encryption Key Refresh Complete, LE Meta.
add(
    "setEventMask",
    "HCI_Set_Event_Mask_Command(event_mask=mask([0x05, 0x08, 0x10, 0x1A, 0x30, 0x3E]))",
    bytes(
        hci.HCI_Set_Event_Mask_Command(
            event_mask=hci.HCI_Set_Event_Mask_Command.mask([0x05, 0x08, 0x10, 0x1A, 0x30, 0x3E])
        )
    ),
)
# LE: Connection Complete, Advertising Report, Connection Update Complete, Remote Connection
# Parameter Request, Data Length Change, Enhanced Connection Complete, PHY Update Complete,
# Extended Advertising Report.
add(
    "leSetEventMask",
    "HCI_LE_Set_Event_Mask_Command(le_event_mask=mask([0x01, 0x02, 0x03, 0x06, 0x07, 0x0A, 0x0C, 0x0D]))",
    bytes(
        hci.HCI_LE_Set_Event_Mask_Command(
            le_event_mask=hci.HCI_LE_Set_Event_Mask_Command.mask([0x01, 0x02, 0x03, 0x06, 0x07, 0x0A, 0x0C, 0x0D])
        )
    ),
)
add(
    "leSetRandomAddress",
    "HCI_LE_Set_Random_Address_Command(random_address=C0:11:22:33:44:55)",
    bytes(hci.HCI_LE_Set_Random_Address_Command(random_address=OWN_RANDOM)),
)
add(
    "leSetScanParameters",
    "HCI_LE_Set_Scan_Parameters_Command(active, interval 0x0060, window 0x0030, own random, policy 0)",
    bytes(
        hci.HCI_LE_Set_Scan_Parameters_Command(
            le_scan_type=1,
            le_scan_interval=0x0060,
            le_scan_window=0x0030,
            own_address_type=1,
            scanning_filter_policy=0,
        )
    ),
)
add(
    "leSetScanEnable",
    "HCI_LE_Set_Scan_Enable_Command(le_scan_enable=1, filter_duplicates=1)",
    bytes(hci.HCI_LE_Set_Scan_Enable_Command(le_scan_enable=1, filter_duplicates=1)),
)
add(
    "leSetExtendedScanParameters1M",
    "HCI_LE_Set_Extended_Scan_Parameters_Command(own random, policy 0, PHYs 1M: active 0x0060/0x0030)",
    bytes(
        hci.HCI_LE_Set_Extended_Scan_Parameters_Command(
            own_address_type=1,
            scanning_filter_policy=0,
            scanning_phys=0x01,
            scan_types=[1],
            scan_intervals=[0x0060],
            scan_windows=[0x0030],
        )
    ),
)
add(
    "leSetExtendedScanParameters1MCoded",
    "HCI_LE_Set_Extended_Scan_Parameters_Command(own public, policy 0, PHYs 1M + Coded)",
    bytes(
        hci.HCI_LE_Set_Extended_Scan_Parameters_Command(
            own_address_type=0,
            scanning_filter_policy=0,
            scanning_phys=0x05,
            scan_types=[1, 0],
            scan_intervals=[0x0060, 0x0120],
            scan_windows=[0x0030, 0x0090],
        )
    ),
)
add(
    "leSetExtendedScanEnable",
    "HCI_LE_Set_Extended_Scan_Enable_Command(enable=1, filter_duplicates=1, duration=0, period=0)",
    bytes(hci.HCI_LE_Set_Extended_Scan_Enable_Command(enable=1, filter_duplicates=1, duration=0, period=0)),
)
add(
    "leCreateConnection",
    "HCI_LE_Create_Connection_Command(peer random C4:F2:17:1A:1D:BB, own random, 30-50 ms, timeout 4 s)",
    bytes(
        hci.HCI_LE_Create_Connection_Command(
            le_scan_interval=0x0060,
            le_scan_window=0x0060,
            initiator_filter_policy=0,
            peer_address_type=1,
            peer_address=PEER,
            own_address_type=1,
            connection_interval_min=24,
            connection_interval_max=40,
            max_latency=0,
            supervision_timeout=400,
            min_ce_length=0,
            max_ce_length=0,
        )
    ),
)
add(
    "leCreateConnectionCancel",
    "HCI_LE_Create_Connection_Cancel_Command()",
    bytes(hci.HCI_LE_Create_Connection_Cancel_Command()),
)
add(
    "disconnect",
    "HCI_Disconnect_Command(connection_handle=0x0040, reason=0x13)",
    bytes(hci.HCI_Disconnect_Command(connection_handle=0x0040, reason=0x13)),
)

# --- Events built from Bumble's classes -----------------------------------------------------------
add(
    "commandStatusPending",
    "HCI_Command_Status_Event(status=0, num_hci_command_packets=1, LE Create Connection)",
    bytes(
        hci.HCI_Command_Status_Event(
            status=0, num_hci_command_packets=1, command_opcode=hci.HCI_LE_CREATE_CONNECTION_COMMAND
        )
    ),
)
add(
    "commandStatusDisallowed",
    "HCI_Command_Status_Event(status=0x0C, num_hci_command_packets=0, Disconnect)",
    bytes(
        hci.HCI_Command_Status_Event(
            status=0x0C, num_hci_command_packets=0, command_opcode=hci.HCI_DISCONNECT_COMMAND
        )
    ),
)
add(
    "commandCompleteUnknownCommand",
    "HCI_Command_Complete_Event(1, LE Read Buffer Size V2, HCI_StatusReturnParameters(0x01))",
    bytes(
        hci.HCI_Command_Complete_Event(
            num_hci_command_packets=1,
            command_opcode=hci.HCI_LE_READ_BUFFER_SIZE_V2_COMMAND,
            return_parameters=hci.HCI_StatusReturnParameters(status=hci.HCI_ErrorCode.UNKNOWN_HCI_COMMAND_ERROR),
        )
    ),
)
add(
    "commandCompleteLEReadBufferSizeZero",
    "HCI_Command_Complete_Event(1, LE Read Buffer Size, (0, length 0, count 0))",
    bytes(
        hci.HCI_Command_Complete_Event(
            num_hci_command_packets=1,
            command_opcode=hci.HCI_LE_READ_BUFFER_SIZE_COMMAND,
            return_parameters=hci.HCI_LE_Read_Buffer_Size_ReturnParameters(
                status=0, le_acl_data_packet_length=0, total_num_le_acl_data_packets=0
            ),
        )
    ),
)
add(
    "disconnectionCompleteRemoteUser",
    "HCI_Disconnection_Complete_Event(status=0, connection_handle=0x0040, reason=0x13)",
    bytes(hci.HCI_Disconnection_Complete_Event(status=0, connection_handle=0x0040, reason=0x13)),
)
add(
    "disconnectionCompleteTimeout",
    "HCI_Disconnection_Complete_Event(status=0, connection_handle=0x0001, reason=0x08)",
    bytes(hci.HCI_Disconnection_Complete_Event(status=0, connection_handle=0x0001, reason=0x08)),
)
add(
    "numberOfCompletedPackets",
    "HCI_Number_Of_Completed_Packets_Event(handles [0x0040, 0x0041], counts [3, 1])",
    bytes(
        hci.HCI_Number_Of_Completed_Packets_Event(
            connection_handles=[0x0040, 0x0041], num_completed_packets=[3, 1]
        )
    ),
)
add(
    "leConnectionComplete",
    "HCI_LE_Connection_Complete_Event(0, 0x0040, central, peer random C4:F2:17:1A:1D:BB, 40, 0, 400, 0)",
    bytes(
        hci.HCI_LE_Connection_Complete_Event(
            status=0,
            connection_handle=0x0040,
            role=0,
            peer_address_type=1,
            peer_address=PEER,
            connection_interval=40,
            peripheral_latency=0,
            supervision_timeout=400,
            central_clock_accuracy=0,
        )
    ),
)
add(
    "leConnectionCompleteFailed",
    "HCI_LE_Connection_Complete_Event(status=0x3E, …zeros)",
    bytes(
        hci.HCI_LE_Connection_Complete_Event(
            status=0x3E,
            connection_handle=0,
            role=0,
            peer_address_type=0,
            peer_address=hci.Address("00:00:00:00:00:00", hci.Address.PUBLIC_DEVICE_ADDRESS),
            connection_interval=0,
            peripheral_latency=0,
            supervision_timeout=0,
            central_clock_accuracy=0,
        )
    ),
)
add(
    "leEnhancedConnectionComplete",
    "HCI_LE_Enhanced_Connection_Complete_Event(0, 0x0041, central, peer public 00:1B:DC:07:32:E1, RPAs, 24, 1, 500, 5)",
    bytes(
        hci.HCI_LE_Enhanced_Connection_Complete_Event(
            status=0,
            connection_handle=0x0041,
            role=0,
            peer_address_type=0,
            peer_address=hci.Address("00:1B:DC:07:32:E1", hci.Address.PUBLIC_DEVICE_ADDRESS),
            local_resolvable_private_address=hci.Address("4A:01:02:03:04:05"),
            peer_resolvable_private_address=hci.Address("00:00:00:00:00:00"),
            connection_interval=24,
            peripheral_latency=1,
            supervision_timeout=500,
            central_clock_accuracy=5,
        )
    ),
)
add(
    "leConnectionUpdateComplete",
    "HCI_LE_Connection_Update_Complete_Event(0, 0x0040, 6, 0, 100)",
    bytes(
        hci.HCI_LE_Connection_Update_Complete_Event(
            status=0, connection_handle=0x0040, connection_interval=6, peripheral_latency=0, supervision_timeout=100
        )
    ),
)

# --- Advertising data -----------------------------------------------------------------------------
SMP_ADVERTISING = core.AdvertisingData(
    [
        (core.AdvertisingData.FLAGS, bytes([0x06])),
        (core.AdvertisingData.COMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, SMP_SERVICE.to_bytes()),
        (core.AdvertisingData.COMPLETE_LOCAL_NAME, b"Zephyr SMP"),
    ]
)
add("advertisingDataSMP", "AdvertisingData(flags 0x06, 128-bit SMP service, complete name 'Zephyr SMP')", bytes(SMP_ADVERTISING))
MIXED_ADVERTISING = core.AdvertisingData(
    [
        (core.AdvertisingData.FLAGS, bytes([0x05])),
        (
            core.AdvertisingData.INCOMPLETE_LIST_OF_16_BIT_SERVICE_CLASS_UUIDS,
            core.UUID.from_16_bits(0x180D).to_bytes() + core.UUID.from_16_bits(0xFE59).to_bytes(),
        ),
        (core.AdvertisingData.INCOMPLETE_LIST_OF_128_BIT_SERVICE_CLASS_UUIDS, SMP_SERVICE.to_bytes()),
        (core.AdvertisingData.SHORTENED_LOCAL_NAME, b"Thingy"),
        (core.AdvertisingData.TX_POWER_LEVEL, bytes([0xF8])),
        (core.AdvertisingData.MANUFACTURER_SPECIFIC_DATA, bytes([0x59, 0x00, 0x01, 0x02, 0x03])),
    ]
)
add(
    "advertisingDataMixed",
    "AdvertisingData(flags 0x05, 16-bit 180D FE59 (incomplete), 128-bit SMP (incomplete), short name 'Thingy', "
    "TX power -8, manufacturer 0x0059 010203)",
    bytes(MIXED_ADVERTISING),
)

add(
    "leAdvertisingReport",
    "HCI_LE_Advertising_Report_Event([ADV_IND random C4:F2:17:1A:1D:BB SMP data rssi -60, SCAN_RSP same, rssi -61])",
    bytes(
        hci.HCI_LE_Advertising_Report_Event(
            reports=[
                hci.HCI_LE_Advertising_Report_Event.Report(
                    event_type=0, address_type=1, address=PEER, data=bytes(SMP_ADVERTISING), rssi=-60
                ),
                hci.HCI_LE_Advertising_Report_Event.Report(
                    event_type=4, address_type=1, address=PEER, data=bytes(SMP_ADVERTISING), rssi=-61
                ),
            ]
        )
    ),
)
add(
    "leExtendedAdvertisingReport",
    "HCI_LE_Extended_Advertising_Report_Event([legacy ADV_IND 0x0013, public 00:1B:DC:07:32:E1, 1M, no secondary, "
    "SID 0xFF, TX 0x7F, rssi -70, no periodic, mixed data])",
    bytes(
        hci.HCI_LE_Extended_Advertising_Report_Event(
            reports=[
                hci.HCI_LE_Extended_Advertising_Report_Event.Report(
                    event_type=0x13,
                    address_type=0,
                    address=hci.Address("00:1B:DC:07:32:E1", hci.Address.PUBLIC_DEVICE_ADDRESS),
                    primary_phy=1,
                    secondary_phy=0,
                    advertising_sid=0xFF,
                    tx_power=0x7F,
                    rssi=-70,
                    periodic_advertising_interval=0,
                    direct_address_type=0,
                    direct_address=hci.Address("00:00:00:00:00:00", hci.Address.PUBLIC_DEVICE_ADDRESS),
                    data=bytes(MIXED_ADVERTISING),
                )
            ]
        )
    ),
)

# --- ACL, L2CAP, ATT ------------------------------------------------------------------------------
MTU_REQUEST = bytes(att.ATT_Exchange_MTU_Request(client_rx_mtu=498))
add("attExchangeMTURequest", "ATT_Exchange_MTU_Request(client_rx_mtu=498)", MTU_REQUEST)
L2CAP_MTU = bytes(l2cap.L2CAP_PDU(0x0004, MTU_REQUEST))
add("l2capATTMTURequest", "L2CAP_PDU(cid=0x0004, ATT_Exchange_MTU_Request(498))", L2CAP_MTU)
add(
    "aclATTMTURequest",
    "HCI_AclDataPacket(handle 0x0040, pb 0 (first, non-flushable), bc 0, L2CAP MTU request)",
    bytes(
        hci.HCI_AclDataPacket(
            connection_handle=0x0040, pb_flag=0, bc_flag=0, data_total_length=len(L2CAP_MTU), data=L2CAP_MTU
        )
    ),
)
# A 60-byte ATT Write Command, cut as Bumble's host cuts an L2CAP PDU into 27-byte ACL packets
# (first non-flushable, then continuations).
WRITE = bytes(att.ATT_Write_Command(attribute_handle=0x0010, attribute_value=bytes(range(57))))
L2CAP_WRITE = bytes(l2cap.L2CAP_PDU(0x0004, WRITE))
add("l2capATTWrite", "L2CAP_PDU(cid=0x0004, ATT_Write_Command(handle 0x0010, bytes 0..56))", L2CAP_WRITE)
for index, offset in enumerate(range(0, len(L2CAP_WRITE), 27)):
    fragment = L2CAP_WRITE[offset : offset + 27]
    add(
        f"aclATTWriteFragment{index}",
        f"HCI_AclDataPacket(handle 0x0040, pb {1 if offset else 0}, bytes {offset}..{offset + len(fragment) - 1})",
        bytes(
            hci.HCI_AclDataPacket(
                connection_handle=0x0040,
                pb_flag=1 if offset else 0,
                bc_flag=0,
                data_total_length=len(fragment),
                data=fragment,
            )
        ),
    )
UPDATE_REQUEST = l2cap.L2CAP_Connection_Parameter_Update_Request(
    identifier=1, interval_min=24, interval_max=40, latency=0, timeout=400
)
add(
    "l2capConnectionParameterUpdateRequest",
    "L2CAP_PDU(0x0005, L2CAP_Connection_Parameter_Update_Request(id 1, 24, 40, 0, 400))",
    bytes(l2cap.L2CAP_PDU(0x0005, bytes(UPDATE_REQUEST))),
)
add(
    "l2capConnectionParameterUpdateResponseAccepted",
    "L2CAP_PDU(0x0005, L2CAP_Connection_Parameter_Update_Response(id 1, result 0))",
    bytes(l2cap.L2CAP_PDU(0x0005, bytes(l2cap.L2CAP_Connection_Parameter_Update_Response(identifier=1, result=0)))),
)
add(
    "l2capCommandRejectNotUnderstood",
    "L2CAP_PDU(0x0005, L2CAP_Command_Reject(id 7, reason 0 command not understood, no data))",
    bytes(l2cap.L2CAP_PDU(0x0005, bytes(l2cap.L2CAP_Command_Reject(identifier=7, reason=0, data=b"")))),
)


# --- A Bumble controller's own answers to the bring-up --------------------------------------------
async def bring_up() -> None:
    answers: list[bytes] = []

    class Sink:
        def on_packet(self, packet: bytes) -> None:
            answers.append(bytes(packet))

    bumble_controller = controller.Controller("vectors", host_sink=Sink(), public_address="F0:F1:F2:F3:F4:F5")
    commands = [
        ("Reset", hci.HCI_Reset_Command()),
        ("ReadLocalVersion", hci.HCI_Read_Local_Version_Information_Command()),
        ("ReadLocalSupportedCommands", hci.HCI_Read_Local_Supported_Commands_Command()),
        ("ReadBDADDR", hci.HCI_Read_BD_ADDR_Command()),
        ("SetEventMask", hci.HCI_Set_Event_Mask_Command(event_mask=bytes(8))),
        ("LESetEventMask", hci.HCI_LE_Set_Event_Mask_Command(le_event_mask=bytes(8))),
        ("LEReadBufferSizeV2", hci.HCI_LE_Read_Buffer_Size_V2_Command()),
        ("LEReadBufferSize", hci.HCI_LE_Read_Buffer_Size_Command()),
        ("ReadBufferSize", hci.HCI_Read_Buffer_Size_Command()),
    ]
    for name, command in commands:
        before = len(answers)
        bumble_controller.on_packet(bytes(command))
        await asyncio.sleep(0.01)
        assert len(answers) == before + 1, f"{name}: {len(answers) - before} answers"
        add(f"controllerAnswer{name}", f"Bumble Controller's answer to {name} (public address F0:F1:F2:F3:F4:F5)", answers[-1])


asyncio.run(bring_up())


swift_vectors.write(
    OUT,
    "make-vectors.py",
    "BumbleVectors",
    "Bytes produced by Bumble {version} (PyPI `bumble`), an independent Bluetooth stack.",
    vectors,
    with_version=True,
    what="expression",
)
