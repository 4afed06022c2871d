import OptoLinkHTTP

/// SKELETON: the embedded staging emulator.
public enum OptoLinkStaging {}
