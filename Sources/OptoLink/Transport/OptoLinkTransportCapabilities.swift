import Foundation

/// What a transport does for the SDK beyond sending one request (docs/CONTRACT.md §3, "Platform
/// seams"): the one seam through which a transport changes how the SDK runs its attempts.
///
/// A transport declares it in ``OptoLinkTransport/capabilities``; the default, ``none``, is what
/// ``URLSessionTransport`` and any plain transport get: the SDK races every attempt against its
/// per-attempt deadline on the injected ``OptoLinkClock`` and runs each public call in a task of its
/// own. The soak tester's native transport declares all three capabilities:
///
/// - ``enforcesDeadline``: `send` itself ends with `URLError(.timedOut)` once
///   ``OptoLinkRequestContext/attemptTimeout`` has passed since it was called (measured on the
///   monotonic clock; zero means no deadline), so the SDK calls it without a deadline race. The
///   retry loop, the back-off sleeps and their timing are the same either way.
/// - ``registersCallScope``: with ``enforcesDeadline``, `send` registers how to cancel its request
///   with the attempt's call scope (`context.callScope`, `register(_:)`), so the SDK runs each
///   public call in its caller's task and ``OptoLink/dispose()`` still ends a request in flight at
///   once with `URLError(.cancelled)`. The call scope is `package`-level: only a transport inside
///   this package (the soak tester's) can declare this one.
/// - a task executor (iOS 18 / macOS 15 and later, `taskExecutor`): the executor the instance's own
///   tasks prefer (initialisation, background calls, back-off sleeps), e.g. the event loop that
///   holds the instance's connection, so a launch's work stays on one thread.
public struct OptoLinkTransportCapabilities: Sendable {
    /// The transport enforces the per-attempt deadline itself (see above).
    public var enforcesDeadline: Bool
    /// The transport registers its in-flight request with the attempt's call scope (see above).
    public var registersCallScope: Bool
    /// The task executor, type-erased so that this type exists below iOS 18 (`TaskExecutor`'s floor).
    private var executorStorage: (any AnyObject & Sendable)?

    /// No capability: the SDK races each attempt against its deadline, in a task of its own per call.
    public static let none = OptoLinkTransportCapabilities()

    /// Capabilities as declared; none by default.
    ///
    /// - Parameters:
    ///   - enforcesDeadline: `send` throws `URLError(.timedOut)` once the attempt's timeout passed.
    ///   - registersCallScope: `send` registers its request with `context.callScope` (honoured only
    ///     together with `enforcesDeadline`: a call runs in its caller's task only when no deadline
    ///     race needs a task of its own).
    public init(enforcesDeadline: Bool = false, registersCallScope: Bool = false) {
        self.enforcesDeadline = enforcesDeadline
        self.registersCallScope = registersCallScope
    }

    /// Whether public calls run in their caller's task (both capabilities declared).
    var runsCallsInCallerTask: Bool { enforcesDeadline && registersCallScope }

    /// Starts the instance's own tasks on the declared executor, where there is one.
    var taskStarter: OptoLinkTaskStarter { OptoLinkTaskStarter(executor: executorStorage) }
}

@available(iOS 18, macOS 15, tvOS 18, watchOS 11, visionOS 2, *)
extension OptoLinkTransportCapabilities {
    /// The task executor the instance's own tasks prefer; `nil`: the global pool.
    public var taskExecutor: (any TaskExecutor)? {
        get { executorStorage.flatMap { $0 as? any TaskExecutor } }
        set { executorStorage = newValue }
    }
}
