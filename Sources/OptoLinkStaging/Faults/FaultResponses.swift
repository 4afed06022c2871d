import OptoLinkHTTP

/// The bodies a fault answers with.
package enum FaultResponses {
    /// nginx's 502 page (157 bytes), as a reverse proxy in front of the backend sends it.
    package static let nginx502: [UInt8] = Array(
        ("<html>\r\n<head><title>502 Bad Gateway</title></head>\r\n<body>\r\n"
            + "<center><h1>502 Bad Gateway</h1></center>\r\n<hr><center>nginx/1.22.1</center>\r\n</body>\r\n</html>\r\n")
            .utf8)

    static func html502() -> HTTPResponse {
        HTTPResponse(status: 502, headers: ["Content-Type": "text/html"], body: nginx502)
    }

    static func empty(status: Int) -> HTTPResponse { HTTPResponse(status: status, headers: [:], body: []) }
}
