swift run FirstUpgrade
swift run FirstUpgrade hello-1.1.0.bin
