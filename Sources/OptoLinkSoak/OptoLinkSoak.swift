/// The soak tester's library entry point. SKELETON.
public enum OptoLinkSoak {
    public static let version = "0.1.0"
}
