import OptoLink

/// SKELETON: test doubles (manual/recording clock, stub transport) live here.
public enum OptoLinkTestSupport {}
