import Foundation
import MCUmgr
import MCUmgrDFU
import SMPCore
import SMPPOSIX
import SMPSerialTransport
import SMPSimulator
import SMPUDPTransport

// Upload throughput against the simulated device, measured side by side in one run:
//  1. UDP to a device as strict as the observed Zephyr server (four buffers, 0.8 ms a request,
//     1500-byte datagrams): our client at its default settings and at window 1, and Python
//     smpclient's upload, against the same simulator configuration — with 0, 1.2 (the observed
//     2 ms round trip) and 20 ms added to every answer. Each side's upload loop is timed (not
//     process start).
//  2. Serial (pty, console framing) paced at 115 200 baud: useful payload rate next to the
//     line-rate limit after base64, framing and CBOR overhead.
//
// Run from the package root: swift run -c release TransferBenchmarks [MiB]

/// The image size: the argument in MiB, else the observed server's 420 552-byte image.
let megabytes = CommandLine.arguments.dropFirst().first.flatMap(Double.init)
let size = megabytes.map { Int($0 * 1_048_576) } ?? 420_552

/// An image the device accepts on its first chunk (MCUboot header), then a pattern.
func makeImage(_ size: Int) -> Data {
    var bytes = [UInt8](repeating: 0, count: size)
    let payload = UInt32(size - 0x200)
    bytes.replaceSubrange(0..<4, with: [0x3d, 0xb8, 0xf3, 0x96])
    bytes.replaceSubrange(8..<10, with: [0x00, 0x02])
    bytes.replaceSubrange(12..<16, with: (0..<4).map { UInt8(truncatingIfNeeded: payload >> ($0 * 8)) })
    for index in 0x200..<size { bytes[index] = UInt8(truncatingIfNeeded: index &* 7) }
    return Data(bytes)
}

func seconds(_ duration: Duration) -> Double {
    Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
}

func pythonPath() -> String {
    let venv = FileManager.default.currentDirectoryPath + "/.venv/bin/python"
    return FileManager.default.isExecutableFile(atPath: venv) ? venv : "/usr/bin/python3"
}

func runPython(_ script: String, _ arguments: [String]) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: pythonPath())
    process.arguments = ["-c", script] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
    return String(decoding: data, as: UTF8.self)
}

let image = makeImage(size)

// MARK: - UDP, the observed device

/// The observed Zephyr server (`zephyr-observed.md`): the simulator's defaults, with room for
/// the image and a link latency.
func observedDevice(latency: Duration) -> SimulatedDevice {
    SimulatedDevice(configuration: .init(slotSize: 0x40_0000, linkLatency: latency))
}

/// Our upload at a forced window, or at the default (`nil`: the device's `buf_count − 1`).
func uploadOverUDP(window: Int?, latency: Duration) async throws -> Double {
    let device = observedDevice(latency: latency)
    let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
    server.start()
    defer { Task { await server.stop() } }
    let client = try await SMPClient.connect(UDPTransport(host: "127.0.0.1", port: server.localAddress.port))
    // The parameters read (OS 6) is part of the default path, so it is inside the measurement.
    let clock = ContinuousClock()
    let elapsed = try await clock.measure {
        try await client.uploadAndWait(ImageUpload(data: image), options: .init(window: window))
    }
    await client.close()
    return Double(size) / seconds(elapsed)
}

let smpclientScript = """
    import asyncio, sys, time
    from smpclient import SMPClient
    from smpclient.transport.udp import SMPUDPTransport
    port, path = int(sys.argv[1]), sys.argv[2]
    async def main():
        transport = SMPUDPTransport()
        connect = transport.connect
        async def connect_to_port(address, timeout_s, port_=1337):
            await connect(address, timeout_s, port=port)
        transport.connect = connect_to_port
        client = SMPClient(transport, "127.0.0.1")
        await client.connect()
        data = open(path, "rb").read()
        start = time.perf_counter()
        async for offset in client.upload(data):
            pass
        print(len(data) / (time.perf_counter() - start))
        await client.disconnect()
    asyncio.run(main())
    """

func uploadWithSmpclient(latency: Duration) async throws -> Double {
    let device = observedDevice(latency: latency)
    let server = try SimulatedUDPServer(device: device, host: "127.0.0.1", port: 0)
    server.start()
    defer { Task { await server.stop() } }
    let path = FileManager.default.temporaryDirectory.appendingPathComponent("bench-\(UUID().uuidString).bin")
    try image.write(to: path)
    defer { try? FileManager.default.removeItem(at: path) }
    let port = server.localAddress.port
    let output = try await Task.detached { try runPython(smpclientScript, [String(port), path.path]) }.value
    guard let rate = Double(output.trimmingCharacters(in: .whitespacesAndNewlines)) else {
        throw CocoaError(.coderReadCorrupt)
    }
    return rate
}

// 1.2 ms added to every answer makes the observed server's 2 ms request round trip (0.8 ms of
// it the device's own processing); 0 ms leaves the device as the only limit, 20 ms is a slow link.
for latency in [Duration.zero, .microseconds(1200), .milliseconds(20)] {
    let windowOne = try await uploadOverUDP(window: 1, latency: latency)
    let defaults = try await uploadOverUDP(window: nil, latency: latency)
    let smpclient = try await uploadWithSmpclient(latency: latency)
    let milliseconds = String(format: "%g", seconds(latency) * 1000)
    print("UDP to the observed device (buf_count 4, 0.8 ms a request), \(milliseconds) ms latency, \(size) bytes")
    print("| client | throughput (kB/s) | vs window 1 | vs smpclient |")
    print("|---|---:|---:|---:|")
    for (name, rate) in [
        ("ours, default settings", defaults), ("ours, window 1", windowOne), ("smpclient 7.3.0", smpclient),
    ] {
        print(
            "| \(name) | " + String(format: "%.1f", rate / 1000) + " | " + String(format: "%.2f×", rate / windowOne)
                + " | " + String(format: "%.2f×", rate / smpclient) + " |"
        )
    }
    print("")
}

// MARK: - Serial at 115 200 baud

/// Bytes on the wire for one console-framed message of `count` bytes.
func consoleWireBytes(_ count: Int) -> Int {
    let base64 = (count + SerialFraming.packetOverhead + 2) / 3 * 4
    let lines = (base64 + 123) / 124
    return base64 + lines * 3
}

func serialUpload(window: Int, bufferSize: Int) async throws -> (rate: Double, limit: Double) {
    let baud = 115_200
    let serialSize = min(size, 64 * 1024)
    let device = SimulatedDevice(configuration: .init(bufferSize: bufferSize, bufferCount: 4, slotSize: 0x40_0000))
    let server = try SimulatedSerialServer(device: device, framing: .console, baudRate: baud)
    server.start()
    defer { Task { await server.stop() } }
    let client = try await SMPClient.connect(
        SerialTransport(path: server.slavePath, baudRate: baud),
        configuration: .init(timeout: .seconds(5))
    )
    let upload = ImageUpload(data: makeImage(serialSize))
    let clock = ContinuousClock()
    let elapsed = try await clock.measure {
        try await client.uploadAndWait(upload, options: .init(window: window))
    }
    // Read after the upload: the frame size follows the device's buf_size, read on first need.
    let frame = await client.maximumFrameSize
    await client.close()
    // The limit: every request frame fills `frame` bytes; its data share of the wire bytes.
    let dataPerFrame = try ChunkSizing.dataSize(limit: frame, remaining: Int.max) {
        upload.request(offset: 100_000, data: $0, isFirst: false)
    }
    let limit = Double(baud) / 10 * Double(dataPerFrame) / Double(consoleWireBytes(frame))
    return (Double(serialSize) / seconds(elapsed), limit)
}

print("Serial console framing over a pty paced at 115200 baud (10 bits per byte), 64 KiB upload")
print("| device buffer | window | payload (B/s) | line-rate limit after overhead (B/s) | share |")
print("|---:|---:|---:|---:|---:|")
for (buffer, window) in [(384, 1), (384, 2), (1024, 1), (1024, 2)] {
    let result = try await serialUpload(window: window, bufferSize: buffer)
    print(
        "| \(buffer) | \(window) | " + String(format: "%.0f", result.rate) + " | "
            + String(format: "%.0f", result.limit) + " | "
            + String(format: "%.0f%%", 100 * result.rate / result.limit) + " |"
    )
}
