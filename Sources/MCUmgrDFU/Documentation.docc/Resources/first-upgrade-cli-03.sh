cd swift-mcumgr   # your clone, whatever its folder is called
swift run mcumgr --conn sim:// image list
swift run mcumgr image info Examples/hello-1.1.0.bin
swift run mcumgr --conn sim:// upgrade Examples/hello-1.1.0.bin --mode test-and-confirm
