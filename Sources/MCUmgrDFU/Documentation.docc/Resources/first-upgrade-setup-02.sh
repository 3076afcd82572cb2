mkdir -p FirstUpgrade/Sources/FirstUpgrade
cd FirstUpgrade
cp ../swift-mcumgr/Examples/hello-1.1.0.bin .
