cd swift-mcumgr
swift run mcumgr --conn sim:// image list
