// BlueZ and D-Bus: Linux only (SMP_BLUEZ is defined for Linux in Package.swift).
#if SMP_BLUEZ
    /// The introspection XML of an exported object: its interfaces with methods, properties and
    /// signals, the standard interfaces, and its child nodes.
    enum DBusIntrospection {
        static let doctype = """
            <!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"
            "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">
            """

        static func xml(object: DBusExportedObject?, isManager: Bool, children: [String]) -> String {
            var lines = [doctype, "<node>"]
            lines.append(standard(isManager: isManager))
            for interface in object?.interfaces ?? [] {
                lines.append("  <interface name=\"\(escape(interface.name))\">")
                for (name, method) in interface.methods.sorted(by: { $0.key < $1.key }) {
                    lines.append("    <method name=\"\(escape(name))\">")
                    for type in method.input.types {
                        lines.append("      <arg type=\"\(escape(type.description))\" direction=\"in\"/>")
                    }
                    for type in method.output.types {
                        lines.append("      <arg type=\"\(escape(type.description))\" direction=\"out\"/>")
                    }
                    lines.append("    </method>")
                }
                for (name, signal) in interface.signals.sorted(by: { $0.key < $1.key }) {
                    lines.append("    <signal name=\"\(escape(name))\">")
                    for type in signal.types { lines.append("      <arg type=\"\(escape(type.description))\"/>") }
                    lines.append("    </signal>")
                }
                for (name, property) in interface.properties.sorted(by: { $0.key < $1.key }) {
                    let access = property.set == nil ? "read" : "readwrite"
                    lines.append(
                        "    <property name=\"\(escape(name))\" type=\"\(escape(property.type.description))\" access=\"\(access)\"/>"
                    )
                }
                lines.append("  </interface>")
            }
            for child in children { lines.append("  <node name=\"\(escape(child))\"/>") }
            lines.append("</node>")
            return lines.joined(separator: "\n")
        }

        private static func standard(isManager: Bool) -> String {
            var text = """
                  <interface name="org.freedesktop.DBus.Introspectable">
                    <method name="Introspect"><arg type="s" direction="out"/></method>
                  </interface>
                  <interface name="org.freedesktop.DBus.Peer">
                    <method name="Ping"/>
                  </interface>
                  <interface name="org.freedesktop.DBus.Properties">
                    <method name="Get"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="out"/></method>
                    <method name="GetAll"><arg type="s" direction="in"/><arg type="a{sv}" direction="out"/></method>
                    <method name="Set"><arg type="s" direction="in"/><arg type="s" direction="in"/><arg type="v" direction="in"/></method>
                    <signal name="PropertiesChanged"><arg type="s"/><arg type="a{sv}"/><arg type="as"/></signal>
                  </interface>
                """
            if isManager {
                text += """

                      <interface name="org.freedesktop.DBus.ObjectManager">
                        <method name="GetManagedObjects"><arg type="a{oa{sa{sv}}}" direction="out"/></method>
                        <signal name="InterfacesAdded"><arg type="o"/><arg type="a{sa{sv}}"/></signal>
                        <signal name="InterfacesRemoved"><arg type="o"/><arg type="as"/></signal>
                      </interface>
                    """
            }
            return text
        }

        private static func escape(_ text: String) -> String {
            var result = ""
            for character in text {
                switch character {
                case "&": result += "&amp;"
                case "<": result += "&lt;"
                case ">": result += "&gt;"
                case "\"": result += "&quot;"
                default: result.append(character)
                }
            }
            return result
        }
    }
#endif
