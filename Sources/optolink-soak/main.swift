import OptoLinkSoak

// SKELETON: the CLI parses arguments and calls OptoLinkSoak.
print("optolink-soak \(OptoLinkSoak.version)")
