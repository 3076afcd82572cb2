import ArgumentParser
import Foundation
import Logging
import MCUboot
import MCUmgr
import MCUmgrConnect
import MCUmgrDFU
import SMPCore
import SMPLink

/// Turns the global options into a connected client, and errors into one line for people.
enum CommandContext {
    /// The connection URL: `--conn`, else `-c PROFILE`, else `$MCUMGR_CONN`.
    /// - Throws: `ValidationError` when none is given or the URL is malformed.
    static func connectionURL(_ global: GlobalOptions) throws -> ConnectionURL {
        let text: String
        if let explicit = global.connection {
            text = explicit
        } else if let profile = global.profile {
            text = try ProfileStore().url(of: profile)
        } else if let environment = ProcessInfo.processInfo.environment["MCUMGR_CONN"], !environment.isEmpty {
            text = environment
        } else {
            throw ValidationError(
                "no device given: pass --conn URL (e.g. --conn udp://192.168.1.10 or --conn sim://), -c PROFILE, or set MCUMGR_CONN"
            )
        }
        do {
            return try ConnectionURL(parsing: text)
        } catch {
            throw ValidationError("--conn: \(error.message)")
        }
    }

    /// A transport for a URL: `sim://` served in-process, every other scheme by
    /// `MCUmgrConnect`.
    /// - Parameters:
    ///   - url: the connection.
    ///   - verbosity: `-v` count, for the transport's logger.
    ///   - requestTimeout: the client's request timeout (`--timeout`), in seconds.
    static func transport(for url: ConnectionURL, verbosity: Int, requestTimeout: Double) throws -> any SMPTransport {
        if case .simulator(let options) = url {
            return try InProcessSimulator.transport(options: options, verbosity: verbosity)
        }
        return try url.makeTransport(
            .init(
                requestTimeout: .milliseconds(Int(requestTimeout * 1000)),
                makeLogger: { StderrLogHandler.logger($0, verbosity: verbosity) }
            )
        )
    }

    /// The client configuration the global options ask for.
    static func clientConfiguration(_ global: GlobalOptions) -> SMPClient.Configuration {
        let verbosity = global.verbose
        return SMPClient.Configuration(
            timeout: .milliseconds(Int(global.timeout * 1000)),
            retries: global.retries,
            makeLogger: { StderrLogHandler.logger($0, verbosity: verbosity) }
        )
    }

    /// Connects, runs `body` with the client, and closes the connection whatever happens.
    static func withClient<T>(_ global: GlobalOptions, _ body: (SMPClient) async throws -> T) async throws -> T {
        let url = try connectionURL(global)
        let transport = try transport(for: url, verbosity: global.verbose, requestTimeout: global.timeout)
        let logger = StderrLogHandler.logger("mcumgr.client", verbosity: global.verbose)
        logger.debug("connecting", metadata: ["endpoint": "\(transport.endpointDescription)"])
        let client = try await SMPClient.connect(transport, configuration: clientConfiguration(global), logger: logger)
        do {
            let result = try await body(client)
            await client.close()
            return result
        } catch {
            await client.close()
            throw error
        }
    }
}

extension MCUmgrCommand {
    /// One line naming what failed and, where we know it, what to try.
    /// - Parameters:
    ///   - error: what failed.
    ///   - timeoutOption: the option that gives a device longer to answer, which a timeout's line
    ///     names (`mcumgr ui` has one of its own).
    static func describe(_ error: any Error, timeoutOption: String = "--timeout") -> String {
        switch error {
        case let error as SMPDeviceError:
            if let rc = error.returnCode, rc == .notSupported {
                // Zephyr answers ENOTSUP for a group it was built without as for a command.
                return "the device has no \(error.requestGroup.name) group, or not this command of it "
                    + "(device error \(rc.rawValue) \(rc.name))"
            }
            if error.matches(FileManagement.ReturnCode.mountPointNotFound) {
                // The group has no listing of mount points: name the ones we know of.
                return "the device refused: \(error): no file system is mounted where the path begins; a device "
                    + "path starts with its mount point, e.g. /lfs1 (Zephyr's LittleFS samples, and the simulator)"
            }
            return "the device refused: \(error)"
        case let error as SMPTransportError where error.code == .timeout:
            return "\(error.message); check the connection and that the device runs an SMP server, "
                + "or raise \(timeoutOption)"
        case let error as SMPTransportError:
            return "\(error)"
        case let error as SMPError:
            return "malformed answer from the device: \(error)"
        case let error as FirmwareUpgradeError:
            return "\(error)"
        case let error as MCUbootError:
            return error.message.isEmpty ? "\(error.code)" : "\(error.code): \(error.message)"
        default:
            return "\(error)"
        }
    }

    /// The exit status for an error, from the table in ``ExitStatus``.
    static func status(for error: any Error) -> Int32 {
        FailureReport(error).status.rawValue
    }
}
