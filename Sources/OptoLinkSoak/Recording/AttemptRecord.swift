import OptoLink

/// One HTTP attempt, as the recording middleware saw it. One row of `attempts.csv`.
///
/// Times are seconds since the run started (monotonic clock).
public struct AttemptRecord: Sendable, Codable, Equatable {
    /// The virtual device, e.g. `d000042`.
    public var device: String
    /// Which app launch of that device (1 = first launch).
    public var launch: Int
    /// The SDK's call id within that launch's instance; (device, launch, callId) names a call.
    public var callId: UInt64
    public var endpoint: OptoLinkEndpoint
    /// 1-based attempt number within the call.
    public var attempt: Int
    /// When the attempt should have started: the journey step's scheduled time for attempt 1
    /// (open model, so coordinated omission cannot hide a stall), the actual start for retries.
    public var intendedStart: Double
    public var actualStart: Double
    public var end: Double
    /// HTTP status, or `nil` when no response arrived.
    public var status: Int?
    /// Why no response arrived, or `nil` when one did.
    public var errorKind: AttemptErrorKind?
    /// `N` parsed from a 429 body.
    public var retryAfterSeconds: Int?
    public var requestBytes: Int
    public var responseBytes: Int
    /// The event's correlation id (`run:device:sequence`), when the request carried one.
    public var correlationId: String?
    /// The client IP the server should attribute this attempt to (the device's simulated IP,
    /// sent as `X-Forwarded-For`), or `nil` when the socket peer is used.
    public var clientIP: String?

    public init(
        device: String, launch: Int, callId: UInt64, endpoint: OptoLinkEndpoint, attempt: Int,
        intendedStart: Double, actualStart: Double, end: Double, status: Int?, errorKind: AttemptErrorKind?,
        retryAfterSeconds: Int?, requestBytes: Int, responseBytes: Int, correlationId: String?,
        clientIP: String? = nil
    ) {
        self.device = device
        self.launch = launch
        self.callId = callId
        self.endpoint = endpoint
        self.attempt = attempt
        self.intendedStart = intendedStart
        self.actualStart = actualStart
        self.end = end
        self.status = status
        self.errorKind = errorKind
        self.retryAfterSeconds = retryAfterSeconds
        self.requestBytes = requestBytes
        self.responseBytes = responseBytes
        self.correlationId = correlationId
        self.clientIP = clientIP
    }
}

/// One public SDK call (or the SDK-internal fire-and-forget session call). One row of `calls.csv`.
public struct CallRecord: Sendable, Codable, Equatable {
    public var device: String
    public var launch: Int
    public var callId: UInt64
    public var endpoint: OptoLinkEndpoint
    /// Number of HTTP attempts the call made.
    public var attempts: Int
    /// The journey step's scheduled time (seconds since run start).
    public var intendedStart: Double
    /// First attempt's actual start.
    public var start: Double
    /// Last attempt's end (includes back-off sleeps).
    public var end: Double
    /// How the call ended.
    public var outcome: CallOutcome
    /// The last attempt's status, if any.
    public var finalStatus: Int?
    public var correlationId: String?

    public init(
        device: String, launch: Int, callId: UInt64, endpoint: OptoLinkEndpoint, attempts: Int,
        intendedStart: Double, start: Double, end: Double, outcome: CallOutcome, finalStatus: Int?,
        correlationId: String?
    ) {
        self.device = device
        self.launch = launch
        self.callId = callId
        self.endpoint = endpoint
        self.attempts = attempts
        self.intendedStart = intendedStart
        self.start = start
        self.end = end
        self.outcome = outcome
        self.finalStatus = finalStatus
        self.correlationId = correlationId
    }
}

/// What one virtual device clicked before install and what its SDK emitted as the
/// deferred link on first launch (input of the attribution verdict).
public struct AttributionRecord: Sendable, Codable, Equatable {
    public var device: String
    /// The link id the device clicked, or `nil` when it installed organically.
    public var clickedLinkId: String?
    /// The deferred link's `linkId`, or `nil` when the SDK emitted none (miss or failure).
    public var emittedLinkId: String?
    /// The deferred link's `matchMethod` raw value (`CLIPBOARD`, …), or `nil`.
    public var matchMethod: String?
    /// Whether the device sat behind the shared NAT IP.
    public var sharedNAT: Bool

    public init(device: String, clickedLinkId: String?, emittedLinkId: String?, matchMethod: String?, sharedNAT: Bool) {
        self.device = device
        self.clickedLinkId = clickedLinkId
        self.emittedLinkId = emittedLinkId
        self.matchMethod = matchMethod
        self.sharedNAT = sharedNAT
    }
}
