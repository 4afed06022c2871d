// optolink-http-bench: the OptoLink HTTP server with one trivial route, for Benchmarks/http-server.sh.
//
//   optolink-http-bench [--host 127.0.0.1] [--port 0] [--loops 2]
//
// Every request gets `200 text/plain` "Hello, World!" (13 bytes), like the nginx baseline's
// `return 200 "Hello, World!";`. Prints `listening <port>` once bound; SIGINT/SIGTERM shut it down.
import OptoLinkHTTP

#if canImport(Glibc)
    import Glibc
#endif

func fail(_ message: String) -> Never {
    var line = message + "\n"
    line.withUTF8 { _ = write(2, $0.baseAddress, $0.count) }
    exit(2)
}

var host = "127.0.0.1"
var port = 0
var loops = 2
var arguments = CommandLine.arguments.dropFirst()
while let flag = arguments.popFirst() {
    guard let value = arguments.popFirst() else {
        fail("missing value for \(flag)")
    }
    switch flag {
    case "--host": host = value
    case "--port": port = Int(value) ?? -1
    case "--loops": loops = Int(value) ?? 0
    default:
        fail("unknown flag \(flag)\nusage: optolink-http-bench [--host H] [--port P] [--loops N]")
    }
}

// Block the stop signals before any loop thread exists, so only sigwait below receives them.
var stopSignals = sigset_t()
sigemptyset(&stopSignals)
sigaddset(&stopSignals, SIGINT)
sigaddset(&stopSignals, SIGTERM)
pthread_sigmask(SIG_BLOCK, &stopSignals, nil)

let body = Array("Hello, World!".utf8)
let server = HTTPServer(
    configuration: .init(host: host, port: port, loopCount: loops),
    handler: { _, _ in .respond(HTTPResponse(status: 200, headers: ["Content-Type": "text/plain"], body: body)) })
do {
    try server.start()
} catch {
    fail("optolink-http-bench: \(error)")
}
print("listening \(server.port)")
fflush(nil)

var received: Int32 = 0
sigwait(&stopSignals, &received)
await server.shutdown()
let counters = server.counters()
print("stopped after \(counters.requests) requests on \(counters.connectionsAccepted) connections")
