/// One HTTP attempt, as the recording middleware saw it. One row of `attempts.csv`.
///
/// Times are seconds since the run started (monotonic clock).
package struct AttemptRecord: Sendable, Codable, Equatable {
    /// The virtual device, e.g. `d000042`.
    package var device: String
    /// Which app launch of that device (1 = first launch).
    package var launch: Int
    /// The SDK's call id within that launch's instance; (device, launch, callId) names a call.
    package var callId: UInt64
    package var endpoint: ContractEndpoint
    /// 1-based attempt number within the call.
    package var attempt: Int
    /// When the attempt should have started: the journey step's scheduled time for attempt 1
    /// (open model, so coordinated omission cannot hide a stall), the actual start for retries.
    package var intendedStart: Double
    package var actualStart: Double
    package var end: Double
    /// HTTP status, or `nil` when no response arrived.
    package var status: Int?
    /// Why no response arrived, or `nil` when one did.
    package var errorKind: AttemptErrorKind?
    /// `N` parsed from a 429 body.
    package var retryAfterSeconds: Int?
    package var requestBytes: Int
    package var responseBytes: Int
    /// The event's correlation id (`run:device:sequence`), when the request carried one.
    package var correlationId: String?
    /// The client IP the server should attribute this attempt to (the device's simulated IP,
    /// sent as `X-Forwarded-For`), or `nil` when the socket peer is used.
    package var clientIP: String?
    /// Seconds the TLS handshake took when this attempt opened an `https` connection (the
    /// native transport times it apart from the request); `nil` over plain HTTP, on a reused
    /// connection, and on URLSession, which does not say.
    package var tls: Double?
    /// A success status whose body is not the contract's JSON (``AttemptClassification/isOffContract(endpoint:status:body:)``).
    /// Counted in the endpoint's `failed`; not a CSV column.
    package var offContract = false

    package init(
        device: String, launch: Int, callId: UInt64, endpoint: ContractEndpoint, attempt: Int,
        intendedStart: Double, actualStart: Double, end: Double, status: Int?, errorKind: AttemptErrorKind?,
        retryAfterSeconds: Int?, requestBytes: Int, responseBytes: Int, correlationId: String?,
        clientIP: String? = nil, tls: Double? = nil
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
        self.tls = tls
    }
}

/// One public SDK call (or the SDK-internal fire-and-forget session call). One row of `calls.csv`.
package struct CallRecord: Sendable, Codable, Equatable {
    package var device: String
    package var launch: Int
    package var callId: UInt64
    package var endpoint: ContractEndpoint
    /// Number of HTTP attempts the call made.
    package var attempts: Int
    /// The journey step's scheduled time (seconds since run start).
    package var intendedStart: Double
    /// First attempt's actual start.
    package var start: Double
    /// Last attempt's end (includes back-off sleeps).
    package var end: Double
    /// How the call ended.
    package var outcome: CallOutcome
    /// The last attempt's status, if any.
    package var finalStatus: Int?
    package var correlationId: String?
    /// The SDK `deviceId` the call's launch used (a reinstall gets a new one), when known.
    package var deviceId: String?

    package init(
        device: String, launch: Int, callId: UInt64, endpoint: ContractEndpoint, attempts: Int,
        intendedStart: Double, start: Double, end: Double, outcome: CallOutcome, finalStatus: Int?,
        correlationId: String?, deviceId: String? = nil
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
        self.deviceId = deviceId
    }
}

/// What one virtual device clicked before install and what its SDK emitted as the
/// deferred link on first launch (input of the attribution verdict).
package struct AttributionRecord: Sendable, Codable, Equatable {
    package var device: String
    /// The link id the device clicked, or `nil` when it installed organically.
    package var clickedLinkId: String?
    /// The deferred link's `linkId`, or `nil` when the SDK emitted none (miss or failure).
    package var emittedLinkId: String?
    /// The deferred link's `matchMethod` raw value (`CLIPBOARD`, …), or `nil`.
    package var matchMethod: String?
    /// Whether the device sat behind the shared NAT IP.
    package var sharedNAT: Bool

    package init(device: String, clickedLinkId: String?, emittedLinkId: String?, matchMethod: String?, sharedNAT: Bool)
    {
        self.device = device
        self.clickedLinkId = clickedLinkId
        self.emittedLinkId = emittedLinkId
        self.matchMethod = matchMethod
        self.sharedNAT = sharedNAT
    }
}
