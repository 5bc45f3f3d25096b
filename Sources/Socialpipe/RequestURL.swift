/// An http(s) URL taken apart for signing and sending: scheme and host
/// lower-cased, the default port dropped (RFC 5849 §3.4.1.2), the fragment
/// removed, and characters a URI cannot carry percent-encoded.
public struct RequestURL: Sendable {
    /// `http` or `https`.
    public let scheme: String
    /// Lower-cased host; an IPv6 literal keeps its brackets.
    public let host: String
    /// The port when it is not the scheme's default.
    public let port: Int?
    /// The path, never empty, as it is sent.
    public let path: [UInt8]
    /// The query without `?`, as it is sent, or nil when there is none.
    public private(set) var query: [UInt8]?

    /// Why a URL is refused.
    public struct Invalid: Error, Sendable { public let message: String }

    /// The base string URI: scheme, authority and path (RFC 5849 §3.4.1.2).
    public var baseURI: [UInt8] {
        var uri: [UInt8] = []
        uri.reserveCapacity(scheme.utf8.count + host.utf8.count + path.count + 10)
        uri += scheme.utf8
        uri += "://".utf8
        uri += host.utf8
        if let port {
            uri.append(0x3A)
            uri += String(port).utf8
        }
        uri += path
        return uri
    }

    /// The whole URL to request, with `extraQuery` (already encoded) appended to the query.
    public func requestURL(extraQuery: [UInt8] = []) -> String {
        var bytes = baseURI
        var query = self.query ?? []
        if !extraQuery.isEmpty {
            if !query.isEmpty { query.append(0x26) }
            query += extraQuery
        }
        if self.query != nil || !extraQuery.isEmpty {
            bytes.append(0x3F)
            bytes += query
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// This URL with `encodedPairs` (`name=value&…`, already encoded) added to its query.
    public func appendingQuery(_ encodedPairs: [UInt8]) -> RequestURL {
        guard !encodedPairs.isEmpty else { return self }
        var copy = self
        if var existing = query, !existing.isEmpty {
            existing.append(0x26)
            copy.query = existing + encodedPairs
        } else {
            copy.query = encodedPairs
        }
        return copy
    }

    /// The query's parameters, decoded.
    public var queryParameters: [Parameter] {
        guard let query else { return [] }
        return PercentEncoding.formPairs(query)
    }

    /// Parses `text`; only http and https with a host are accepted.
    public init(_ text: String) throws(Invalid) {
        let bytes = Array(text.utf8)
        guard let schemeEnd = Self.find(Array("://".utf8), in: bytes), schemeEnd > 0 else {
            throw Invalid(message: "url has no scheme: \(text)")
        }
        let schemeText = String(decoding: bytes[..<schemeEnd], as: UTF8.self).lowercased()
        guard schemeText == "http" || schemeText == "https" else {
            throw Invalid(message: "url scheme must be http or https: \(text)")
        }
        scheme = schemeText
        let authorityStart = schemeEnd + 3
        var authorityEnd = authorityStart
        while authorityEnd < bytes.count, ![0x2F, 0x3F, 0x23].contains(bytes[authorityEnd]) { authorityEnd += 1 }
        let authority = bytes[authorityStart..<authorityEnd]
        if authority.contains(0x40) { throw Invalid(message: "url must not carry user information") }

        var hostBytes: ArraySlice<UInt8>
        var portBytes: ArraySlice<UInt8> = []
        if authority.first == 0x5B {
            guard let close = authority.firstIndex(of: 0x5D) else { throw Invalid(message: "url has an unclosed IPv6 host") }
            hostBytes = authority[authority.startIndex...close]
            let literal = authority[(authority.startIndex + 1)..<close]
            guard !literal.isEmpty, literal.allSatisfy({ PercentEncoding.hexValue($0) != nil || $0 == 0x3A || $0 == 0x2E }) else {
                throw Invalid(message: "url has an invalid IPv6 host")
            }
            let rest = authority[(close + 1)...]
            if let first = rest.first {
                guard first == 0x3A else { throw Invalid(message: "url has text after its IPv6 host") }
                portBytes = rest.dropFirst()
            }
        } else if let colon = authority.lastIndex(of: 0x3A) {
            hostBytes = authority[..<colon]
            portBytes = authority[(colon + 1)...]
        } else {
            hostBytes = authority
        }
        guard !hostBytes.isEmpty else { throw Invalid(message: "url has no host: \(text)") }
        if hostBytes.first != 0x5B {
            let valid = hostBytes.allSatisfy { byte in
                (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte)
                    || byte == 0x2D || byte == 0x2E || byte == 0x5F
            }
            guard valid else { throw Invalid(message: "url host has characters a host name cannot have") }
        }
        host = String(decoding: hostBytes, as: UTF8.self).lowercased()

        if portBytes.isEmpty {
            port = nil
        } else {
            guard portBytes.count <= 5, portBytes.allSatisfy({ (0x30...0x39).contains($0) }),
                  let number = Int(String(decoding: portBytes, as: UTF8.self)), (1...65535).contains(number) else {
                throw Invalid(message: "url has an invalid port")
            }
            let defaultPort = scheme == "https" ? 443 : 80
            port = number == defaultPort ? nil : number
        }

        var pathEnd = authorityEnd
        while pathEnd < bytes.count, bytes[pathEnd] != 0x3F, bytes[pathEnd] != 0x23 { pathEnd += 1 }
        let rawPath = bytes[authorityEnd..<pathEnd]
        path = rawPath.isEmpty ? [0x2F] : Self.uriSafe(rawPath, allowQuestionMark: false)
        if pathEnd < bytes.count, bytes[pathEnd] == 0x3F {
            var queryEnd = pathEnd + 1
            while queryEnd < bytes.count, bytes[queryEnd] != 0x23 { queryEnd += 1 }
            query = Self.uriSafe(bytes[(pathEnd + 1)..<queryEnd], allowQuestionMark: true)
        } else {
            query = nil
        }
    }

    private static func find(_ needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) {
            return start
        }
        return nil
    }

    /// Percent-encodes what RFC 3986 does not allow in a path or query
    /// (non-ASCII, controls, space, `"<>\^`{|}`); existing `%XX` stay.
    private static func uriSafe(_ bytes: ArraySlice<UInt8>, allowQuestionMark: Bool) -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        for byte in bytes {
            let allowed: Bool
            switch byte {
            case 0x21, 0x24...0x3B, 0x3D, 0x40...0x5A, 0x5F, 0x61...0x7A, 0x7E: allowed = true
            case 0x3F: allowed = allowQuestionMark
            default: allowed = false
            }
            if allowed {
                output.append(byte)
            } else {
                PercentEncoding.encode(CollectionOfOne(byte), into: &output)
            }
        }
        return output
    }
}
