import Foundation
import SMPCBOR
import SMPCore

// Encodes and decodes image-upload frames with our codec and with Python's cbor2 (its C
// extension) in the same run, and prints throughput side by side as a ratio.
//
// Run from the package root: swift run -c release SMPBenchmarks [iterations]
// The peer is .venv/bin/python (scripts/setup-peers.sh) or python3 on PATH with cbor2.

let iterations = CommandLine.arguments.dropFirst().first.flatMap(Int.init) ?? 200_000
let chunkSizes = [128, 1389, 2000]

func measure(_ body: () throws -> Void) rethrows -> Double {
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    return Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
}

/// A sink the optimiser cannot see through, so measured work is not removed.
@inline(never) func blackHole<T>(_ value: T) { withExtendedLifetime(value) {} }

func pythonPath() -> String {
    let venv = FileManager.default.currentDirectoryPath + "/.venv/bin/python"
    return FileManager.default.isExecutableFile(atPath: venv) ? venv : "/usr/bin/env"
}

func runPython(_ script: String, _ arguments: [String]) throws -> String {
    let process = Process()
    let python = pythonPath()
    process.executableURL = URL(fileURLWithPath: python)
    process.arguments = (python == "/usr/bin/env" ? ["python3"] : []) + ["-c", script] + arguments
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    guard process.terminationStatus == 0 else { throw CocoaError(.executableLoad) }
    return String(decoding: data, as: UTF8.self)
}

// The peer builds the same frame: header packed with struct, payload with cbor2.dumps, and
// parses it back with cbor2.loads. Times come from perf_counter inside Python.
let peerScript = """
    import sys, time, struct, hashlib, cbor2
    n, size = int(sys.argv[1]), int(sys.argv[2])
    data = bytes(i % 256 for i in range(size))
    sha = hashlib.sha256(data).digest()
    def frame(seq):
        payload = cbor2.dumps({"image": 0, "len": 1048576, "off": 0, "sha": sha, "data": data, "upgrade": False})
        return struct.pack(">BBHHBB", 0x0a, 0, len(payload), 1, seq & 0xff, 1) + payload
    t = time.perf_counter()
    for i in range(n): f = frame(i)
    enc = time.perf_counter() - t
    t = time.perf_counter()
    for i in range(n):
        h = struct.unpack(">BBHHBB", f[:8]); m = cbor2.loads(f[8:]); d = m["data"]
    dec = time.perf_counter() - t
    print(enc, dec, len(f))
    """

print("Image-upload frame encode/decode, \(iterations) iterations each, release build")
print("| data bytes | frame bytes | ours encode/s | cbor2 encode/s | ratio | ours decode/s | cbor2 decode/s | ratio |")
print("|---:|---:|---:|---:|---:|---:|---:|---:|")
for size in chunkSizes {
    let data = Data((0..<size).map { UInt8($0 % 256) })
    let request = ImageManagement.Upload(
        offset: 0,
        data: data,
        length: 1_048_576,
        sha256: Data(repeating: 0xab, count: 32),
        image: 0,
        upgrade: false
    )
    var frameBytes: [UInt8] = []
    let encodeSeconds = try measure {
        for index in 0..<iterations {
            frameBytes = try SMPFrame.request(request, sequence: UInt8(truncatingIfNeeded: index)).bytes
            blackHole(frameBytes)
        }
    }
    let decodeSeconds = try measure {
        for _ in 0..<iterations {
            let frame = try SMPFrame(parsing: frameBytes)
            blackHole(try frame.decodeRequest(as: ImageManagement.Upload.self))
        }
    }
    let peer = try runPython(peerScript, [String(iterations), String(size)]).split(separator: " ")
    guard peer.count == 3, let peerEncode = Double(peer[0]), let peerDecode = Double(peer[1]) else {
        fatalError("unexpected peer output: \(peer)")
    }
    let oursEncode = Double(iterations) / encodeSeconds
    let oursDecode = Double(iterations) / decodeSeconds
    let theirsEncode = Double(iterations) / peerEncode
    let theirsDecode = Double(iterations) / peerDecode
    let encodeRatio = String(format: "%.2f×", oursEncode / theirsEncode)
    let decodeRatio = String(format: "%.2f×", oursDecode / theirsDecode)
    let row: [String] = [
        "\(size)", "\(frameBytes.count)", "\(Int(oursEncode))", "\(Int(theirsEncode))", encodeRatio,
        "\(Int(oursDecode))", "\(Int(theirsDecode))", decodeRatio,
    ]
    print("| " + row.joined(separator: " | ") + " |")
}
