cd swift-mcumgr   # your clone, whatever its folder is called
swift run mcumgr --conn sim:// image list
