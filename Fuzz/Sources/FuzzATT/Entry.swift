import FuzzDriver

/// The process entry point SwiftPM aliases `main` to: libFuzzer's driver.
@_cdecl("FuzzATT_main")
public func fuzzerMain(_ argc: CInt, _ argv: UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>?) -> CInt {
    mcumgr_fuzz_main(argc, argv)
}
