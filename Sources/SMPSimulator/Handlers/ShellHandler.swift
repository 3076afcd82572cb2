import SMPCBOR
import SMPCore

/// Group 9, shell: a few commands of a Zephyr shell.
enum ShellHandler {
    /// `CONFIG_MCUMGR_GRP_SHELL_MAX_ARGUMENTS`-ish limit on the joined command line.
    static let maximumCommandLength = 256

    static let group = HandlerGroup(
        group: .shell,
        name: "shell mgmt",
        routes: [
            Route(ShellManagement.Execute.self) { request, device, _ throws(HandlerFailure) in
                try execute(request, device: device)
            }
        ]
    )

    static func execute(_ request: SMPServerRequest, device: DeviceCore) throws(HandlerFailure) -> CBORMap {
        let arguments = try request.decode(ShellManagement.Execute.self).arguments
        guard !arguments.isEmpty, !arguments[0].isEmpty else {
            throw .group(.shell, ShellManagement.ReturnCode.emptyCommand.rawValue)
        }
        guard arguments.joined(separator: " ").utf8.count <= maximumCommandLength else {
            throw .group(.shell, ShellManagement.ReturnCode.commandTooLong.rawValue)
        }
        let (output, status) = run(arguments, device: device)
        return CBORMap(response: ShellManagement.Execute.Response(output: output, returnCode: status))
    }

    /// Runs a command line; returns its output and exit status.
    static func run(_ arguments: [String], device: DeviceCore) -> (String, Int) {
        switch arguments {
        case ["help"]:
            return ("Available commands:\n  echo\n  fs\n  help\n  kernel\n  mcuboot\n", 0)
        case let args where args.first == "echo":
            return (args.dropFirst().joined(separator: " ") + "\n", 0)
        case let args where args.first == "fs":
            return fileSystem(Array(args.dropFirst()), device: device)
        case ["kernel", "version"]:
            return ("Zephyr version \(device.configuration.release.kernelVersion)\n", 0)
        case ["kernel", "uptime"]:
            return ("Uptime: \(device.requestCount * 10) ms\n", 0)
        case ["kernel"]:
            return ("kernel - Kernel commands\nSubcommands:\n  uptime\n  version\n", 1)
        case ["mcuboot"]:
            var lines = ["swap type: \(device.bootloader.swapType(image: 0))"]
            for state in device.bootloader.stateList() {
                lines.append(
                    "image \(state.imageNumber) slot \(state.slot): version \(state.version)"
                        + (state.isActive ? " active" : "") + (state.isConfirmed ? " confirmed" : "")
                        + (state.isPending ? " pending" : "")
                )
            }
            return (lines.joined(separator: "\n") + "\n", 0)
        default:
            return ("\(arguments[0]): command not found\n", -8)
        }
    }

    /// `fs ls [PATH]` as Zephyr's file system shell prints it: one name per line, a folder's with
    /// a trailing `/`; a folder that cannot be opened is `-ENOEXEC` (what a client reading a
    /// device's files, which the group cannot list, offers from the shell).
    static func fileSystem(_ arguments: [String], device: DeviceCore) -> (String, Int) {
        guard arguments.first == "ls", arguments.count <= 2 else {
            return ("fs - File system commands\nSubcommands:\n  ls\n", 1)
        }
        let path = arguments.count == 2 ? arguments[1] : FileSystemSandbox.mountPoint
        guard case .inside(let url) = device.files.resolve(path), let entries = device.files.list(url) else {
            return ("Unable to open \(path) (err -2)\n", -8)
        }
        return (entries.map { $0.name + ($0.isDirectory ? "/" : "") + "\n" }.joined(), 0)
    }
}
