import Foundation

let imagePath = CommandLine.arguments.dropFirst().first ?? "hello-1.1.0.bin"
let program = try SimulatedUpgrade()
try await program.printSlots()
await program.loseAnswers()
let summary = try await program.upgrade(to: URL(fileURLWithPath: imagePath))
print("upgraded in \(summary.duration.formatted(.units(allowed: [.seconds], fractionalPart: .show(length: 1))))")
try await program.printSlots()
