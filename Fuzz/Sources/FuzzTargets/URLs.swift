@testable import Socialpipe

/// URL normalisation (`RequestURL`): any bytes either are refused or give a
/// URL of printable ASCII with an http(s) scheme, a lower-case host, no
/// default port, a path starting with `/` and free of dot segments, and no
/// fragment; normalising that URL again changes nothing; the parts the
/// parser reports make up the URL as sent, which is all it appends.
public enum URLs {
    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        let output = ByteBuffer()
        guard let parts = try? RequestURL.parse(data, into: output) else {
            if let text = String(validating: Array(data), as: UTF8.self) {
                require((try? RequestURL(text)) == nil, "RequestURL accepts \(escaped(Array(data))) that parse refuses")
            }
            return
        }
        let url = output.array
        let input = Array(data)
        require(url.allSatisfy { (0x21...0x7E).contains($0) && $0 != 0x23 },
                "the URL as sent holds a byte it may not: \(escaped(url)) from \(escaped(input))")
        let scheme = Array(output[parts.scheme])
        require(scheme == Array("http".utf8) || scheme == Array("https".utf8), "scheme \(escaped(scheme))")
        let host = Array(output[parts.host])
        require(!host.isEmpty && !host.contains { (0x41...0x5A).contains($0) }, "host \(escaped(host)) of \(escaped(input))")
        if let port = parts.port {
            require((1...65535).contains(port) && port != (scheme.count == 5 ? 443 : 80), "port \(port) of \(escaped(input))")
        }
        let path = Array(output[parts.path])
        require(path.first == 0x2F, "path \(escaped(path)) does not start with /")
        for segment in path.split(separator: 0x2F, omittingEmptySubsequences: false) {
            require(segment != [0x2E] && segment != [0x2E, 0x2E], "path \(escaped(path)) of \(escaped(input)) keeps a dot segment")
        }
        var expected = scheme + Array("://".utf8) + host
        if let port = parts.port { expected += Array(":\(port)".utf8) }
        expected += path
        require(Array(output[parts.baseURI]) == expected, "baseURI \(escaped(Array(output[parts.baseURI]))) is not scheme://authority/path")
        if let query = parts.query { expected += [0x3F] + Array(output[query]) }
        require(url == expected, "the parts \(escaped(expected)) do not make up the URL \(escaped(url))")

        let again = ByteBuffer()
        let reparsed = url.withUnsafeBufferPointer { try? RequestURL.parse($0, into: again) }
        require(reparsed.map { _ in again.array } == url,
                "normalising \(escaped(url)) again gives \(reparsed.map { _ in escaped(again.array) } ?? "a refusal")")

        if let text = String(validating: input, as: UTF8.self) {
            let parsed = try? RequestURL(text)
            require(parsed.map { Array($0.requestURL.utf8) } == url, "RequestURL(text).requestURL differs from parse for \(escaped(input))")
        }
        _ = Redaction.redactedURL(String(decoding: url, as: UTF8.self))
    }
}
