import Foundation

let imagePath = CommandLine.arguments.dropFirst().first ?? "hello-1.1.0.bin"
let program = try SimulatedUpgrade()
try await program.printSlots()
