cd swift-mcumgr   # your clone, whatever its folder is called
mkdir -p Examples/FirstUpgrade/Sources/FirstUpgrade
cd Examples/FirstUpgrade
cp ../hello-1.1.0.bin .
