#ifndef MCUMGR_FUZZ_DRIVER_H
#define MCUMGR_FUZZ_DRIVER_H

/// Runs libFuzzer's driver over the target's LLVMFuzzerTestOneInput. SwiftPM links an
/// executable target with `main` aliased to `<Module>_main` on Linux, so libFuzzer's own `main`
/// is never used: each target defines `<Module>_main` and calls this.
int mcumgr_fuzz_main(int argc, char **argv);

#endif
