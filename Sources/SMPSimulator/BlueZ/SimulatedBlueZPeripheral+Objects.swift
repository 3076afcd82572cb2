// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    import SMPBytes
    import SMPDBus
    import SMPLink

    /// The exported objects: the GATT application (SMP, Device Information, Battery) under one
    /// ObjectManager, and the advertisement. Only properties BlueZ's API defines are exported (an
    /// object with others is left out by bluezoo).
    extension SimulatedBlueZPeripheral {
        func exportObjects(on bus: DBusConnection) {
            bus.addObjectManager(at: Self.root)
            bus.export(service(Self.smpService, uuid: SMPGATT.serviceUUID))
            bus.export(smpCharacteristicObject())
            let information = try? Self.root.appending("service1")
            let battery = try? Self.root.appending("service2")
            if let information, let battery {
                bus.export(service(information, uuid: "0000180a-0000-1000-8000-00805f9b34fb"))
                let firmware = device.configuration.factoryVersion
                for (index, (uuid, value)) in [
                    ("00002a29-0000-1000-8000-00805f9b34fb", "Zephyr"),
                    ("00002a24-0000-1000-8000-00805f9b34fb", "swift-mcumgr simulator"),
                    ("00002a26-0000-1000-8000-00805f9b34fb", firmware),
                ].enumerated() {
                    if let path = try? information.appending("char\(index)") {
                        bus.export(readOnly(path, service: information, uuid: uuid, value: Array(value.utf8)))
                    }
                }
                bus.export(service(battery, uuid: "0000180f-0000-1000-8000-00805f9b34fb"))
                if let path = try? battery.appending("char0") {
                    bus.export(
                        readOnly(path, service: battery, uuid: "00002a19-0000-1000-8000-00805f9b34fb", value: [100])
                    )
                }
            }
            bus.export(advertisementObject())
        }

        private func service(_ path: DBusObjectPath, uuid: String) -> DBusExportedObject {
            DBusExportedObject(
                path: path,
                interfaces: [
                    DBusInterface(
                        name: "org.bluez.GattService1",
                        properties: [
                            "UUID": .constant(.string(uuid.lowercased())), "Primary": .constant(.boolean(true)),
                        ]
                    )
                ]
            )
        }

        private func readOnly(_ path: DBusObjectPath, service: DBusObjectPath, uuid: String, value: [UInt8])
            -> DBusExportedObject
        {
            DBusExportedObject(
                path: path,
                interfaces: [
                    DBusInterface(
                        name: "org.bluez.GattCharacteristic1",
                        methods: [
                            "ReadValue": DBusMethod(input: "a{sv}", output: "ay") { _ in
                                DBusMethodReply([.bytes(value)])
                            }
                        ],
                        properties: [
                            "UUID": .constant(.string(uuid)),
                            "Service": .constant(.objectPath(service)),
                            "Flags": .constant(.strings(["read"])),
                        ]
                    )
                ]
            )
        }

        private func smpCharacteristicObject() -> DBusExportedObject {
            let callOptions: @Sendable (DBusMethodCall, Int) -> [String: DBusValue] = { call, index in
                call.arguments.count > index ? call.arguments[index].stringDictionary ?? [:] : [:]
            }
            let methods: [String: DBusMethod] = [
                "WriteValue": DBusMethod(input: "aya{sv}") { [weak self] call in
                    guard let self, let bytes = call.arguments[0].bytesValue else { return DBusMethodReply() }
                    let link = self.touch(options: callOptions(call, 1))
                    self.received(bytes, link: link)
                    return DBusMethodReply()
                },
                "ReadValue": DBusMethod(input: "a{sv}", output: "ay") { _ in
                    throw DBusRemoteError(
                        name: "org.bluez.Error.NotPermitted",
                        message: "SMP is written and notified, not read"
                    )
                },
                "StartNotify": DBusMethod { [weak self] _ in
                    self?.setNotifying(true)
                    return DBusMethodReply()
                },
                "StopNotify": DBusMethod { [weak self] _ in
                    self?.setNotifying(false)
                    return DBusMethodReply()
                },
                "AcquireWrite": DBusMethod(input: "a{sv}", output: "hq") { [weak self] call in
                    guard let self else { throw DBusRemoteError(name: "org.bluez.Error.Failed") }
                    return try self.acquireWrite(options: callOptions(call, 0))
                },
                "AcquireNotify": DBusMethod(input: "a{sv}", output: "hq") { [weak self] call in
                    guard let self else { throw DBusRemoteError(name: "org.bluez.Error.Failed") }
                    return try self.acquireNotify(options: callOptions(call, 0))
                },
                "Confirm": DBusMethod { _ in DBusMethodReply() },
            ]
            var properties: [String: DBusProperty] = [
                "UUID": .constant(.string(SMPGATT.characteristicUUID.lowercased())),
                "Service": .constant(.objectPath(Self.smpService)),
                "Flags": .constant(.strings(["write-without-response", "notify"])),
                "Notifying": DBusProperty(.boolean) { [weak self] in
                    .boolean(self?.state.withLock { $0.notifying } ?? false)
                },
                "MTU": .constant(.uint16(UInt16(clamping: options.maximumMTU))),
            ]
            if options.offerAcquire {
                properties["WriteAcquired"] = DBusProperty(.boolean) { [weak self] in
                    .boolean(self?.state.withLock { $0.writeSocket != nil } ?? false)
                }
                properties["NotifyAcquired"] = DBusProperty(.boolean) { [weak self] in
                    .boolean(self?.state.withLock { $0.notifySocket != nil } ?? false)
                }
            }
            return DBusExportedObject(
                path: Self.smpCharacteristic,
                interfaces: [
                    DBusInterface(name: "org.bluez.GattCharacteristic1", methods: methods, properties: properties)
                ]
            )
        }

        private func advertisementObject() -> DBusExportedObject {
            DBusExportedObject(
                path: Self.advertisement,
                interfaces: [
                    DBusInterface(
                        name: "org.bluez.LEAdvertisement1",
                        methods: ["Release": DBusMethod { _ in DBusMethodReply() }],
                        properties: [
                            "Type": .constant(.string("peripheral")),
                            "ServiceUUIDs": .constant(.strings([SMPGATT.serviceUUID.lowercased()])),
                            "LocalName": .constant(.string(options.name)),
                            "Discoverable": .constant(.boolean(true)),
                        ]
                    )
                ]
            )
        }
    }
#endif
