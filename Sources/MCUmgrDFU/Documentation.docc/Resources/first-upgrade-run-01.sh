swift run FirstUpgrade
