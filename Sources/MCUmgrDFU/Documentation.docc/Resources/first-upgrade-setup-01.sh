mkdir -p FirstUpgrade/Sources/FirstUpgrade
cd FirstUpgrade
