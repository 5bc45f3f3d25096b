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

    /// Where `parse(_:into:)` put the parts of a URL, as offsets into the
    /// buffer: `scheme://host[:port]path`, then `?query` when there is one.
    public struct Parts: Sendable {
        /// The scheme, lower-cased.
        public var scheme: Range<Int>
        /// The host, lower-cased.
        public var host: Range<Int>
        /// The port when it is not the scheme's default.
        public var port: Int?
        /// The path, never empty.
        public var path: Range<Int>
        /// The query without `?`, or nil when the URL has none.
        public var query: Range<Int>?
        /// The base string URI (RFC 5849 §3.4.1.2): scheme to path.
        public var baseURI: Range<Int> { scheme.lowerBound..<path.upperBound }
    }

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

    /// The whole URL as it is sent.
    public var requestURL: String {
        var bytes = baseURI
        if let query {
            bytes.append(0x3F)
            bytes += query
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Parses `text`; only http and https with a host are accepted.
    public init(_ text: String) throws(Invalid) {
        var text = text
        let buffer = ByteBuffer()
        let parsed = text.withUTF8 { bytes in
            Result { () throws(Invalid) -> Parts in try Self.parse(bytes, into: buffer) }
        }
        let parts = try parsed.get()
        scheme = String(decoding: buffer[parts.scheme], as: UTF8.self)
        host = String(decoding: buffer[parts.host], as: UTF8.self)
        port = parts.port
        path = Array(buffer[parts.path])
        query = parts.query.map { Array(buffer[$0]) }
    }

    /// Parses `text` and appends the URL as it is sent to `output`; only
    /// http and https with a host are accepted.
    public static func parse(_ text: UnsafeBufferPointer<UInt8>, into output: ByteBuffer) throws(Invalid) -> Parts {
        func describe() -> String { String(decoding: text, as: UTF8.self) }
        let count = text.count
        var schemeEnd = 0
        while schemeEnd + 3 <= count,
              !(text[schemeEnd] == 0x3A && text[schemeEnd + 1] == 0x2F && text[schemeEnd + 2] == 0x2F) {
            schemeEnd += 1
        }
        guard schemeEnd + 3 <= count, schemeEnd > 0 else { throw Invalid(message: "url has no scheme: \(describe())") }
        // Only ASCII letters can lower-case to "http" or "https".
        func schemeIs(_ name: StaticString) -> Bool {
            guard schemeEnd == name.utf8CodeUnitCount else { return false }
            for index in 0..<schemeEnd where asciiLowercased(text[index]) != name.utf8Start[index] { return false }
            return true
        }
        let isHTTPS = schemeIs("https")
        guard isHTTPS || schemeIs("http") else {
            throw Invalid(message: "url scheme must be http or https: \(describe())")
        }

        let authorityStart = schemeEnd + 3
        var authorityEnd = authorityStart
        while authorityEnd < count, text[authorityEnd] != 0x2F, text[authorityEnd] != 0x3F, text[authorityEnd] != 0x23 {
            authorityEnd += 1
        }
        for index in authorityStart..<authorityEnd where text[index] == 0x40 {
            throw Invalid(message: "url must not carry user information")
        }

        var hostRange = authorityStart..<authorityEnd
        var portRange = authorityEnd..<authorityEnd
        let isIPv6 = authorityStart < authorityEnd && text[authorityStart] == 0x5B
        if isIPv6 {
            var close = authorityStart
            while close < authorityEnd, text[close] != 0x5D { close += 1 }
            guard close < authorityEnd else { throw Invalid(message: "url has an unclosed IPv6 host") }
            hostRange = authorityStart..<(close + 1)
            var validLiteral = close > authorityStart + 1
            for index in (authorityStart + 1)..<close {
                let byte = text[index]
                if PercentEncoding.hexValue(byte) == nil && byte != 0x3A && byte != 0x2E { validLiteral = false }
            }
            guard validLiteral else { throw Invalid(message: "url has an invalid IPv6 host") }
            if close + 1 < authorityEnd {
                guard text[close + 1] == 0x3A else { throw Invalid(message: "url has text after its IPv6 host") }
                portRange = (close + 2)..<authorityEnd
            }
        } else {
            var colon = authorityEnd
            while colon > authorityStart, text[colon - 1] != 0x3A { colon -= 1 }
            if colon > authorityStart {
                hostRange = authorityStart..<(colon - 1)
                portRange = colon..<authorityEnd
            }
        }
        guard !hostRange.isEmpty else { throw Invalid(message: "url has no host: \(describe())") }
        if !isIPv6 {
            // ALPHA / DIGIT / "-" / "." / "_", one bit per ASCII byte.
            let low: UInt64 = 0x03FF_6000_0000_0000
            let high: UInt64 = 0x07FF_FFFE_87FF_FFFE
            for index in hostRange {
                let byte = text[index]
                guard byte < 128, ((byte < 64 ? low : high) >> UInt64(byte & 63)) & 1 != 0 else {
                    throw Invalid(message: "url host has characters a host name cannot have")
                }
            }
        }

        var port: Int?
        if !portRange.isEmpty {
            // At most five digits are counted: twenty would overflow an Int.
            guard portRange.count <= 5, portRange.allSatisfy({ (0x30...0x39).contains(text[$0]) }) else {
                throw Invalid(message: "url has an invalid port")
            }
            let number = portRange.reduce(0) { $0 * 10 + Int(text[$1] - 0x30) }
            guard (1...65535).contains(number) else { throw Invalid(message: "url has an invalid port") }
            port = number == (isHTTPS ? 443 : 80) ? nil : number
        }

        let origin = output.count
        output.append(isHTTPS ? "https" : "http")
        let scheme = origin..<output.count
        output.append("://")
        let hostStart = output.count
        let hostOut = output.reserve(hostRange.count)
        for (offset, index) in hostRange.enumerated() { hostOut[offset] = asciiLowercased(text[index]) }
        output.advance(by: hostRange.count)
        let host = hostStart..<output.count
        if let port {
            output.append(0x3A)
            output.appendDecimal(Int64(port))
        }

        var pathEnd = authorityEnd
        while pathEnd < count, text[pathEnd] != 0x3F, text[pathEnd] != 0x23 { pathEnd += 1 }
        let pathStart = output.count
        if pathEnd == authorityEnd {
            output.append(0x2F)
        } else {
            appendURISafe(text, authorityEnd..<pathEnd, allowQuestionMark: false, to: output)
            try removeDotSegments(output, from: pathStart)
        }
        let path = pathStart..<output.count
        var query: Range<Int>?
        if pathEnd < count, text[pathEnd] == 0x3F {
            var queryEnd = pathEnd + 1
            while queryEnd < count, text[queryEnd] != 0x23 { queryEnd += 1 }
            output.append(0x3F)
            let queryStart = output.count
            appendURISafe(text, (pathEnd + 1)..<queryEnd, allowQuestionMark: true, to: output)
            query = queryStart..<output.count
        }
        return Parts(scheme: scheme, host: host, port: port, path: path, query: query)
    }

    /// RFC 3986 §5.2.4 on the path at the end of `output` (it starts with
    /// `/`): libcurl sends `/a/../b` as `/b`, so that is what gets signed. A
    /// dot segment written with `%2E` is refused: whether it means a
    /// directory depends on who decodes it, so no single form can be signed.
    private static func removeDotSegments(_ output: ByteBuffer, from pathStart: Int) throws(Invalid) {
        let bytes = output.start
        let end = output.count
        var hasDotSegment = false
        var segmentStart = pathStart + 1
        for index in (pathStart + 1)...end where index == end || bytes[index] == 0x2F {
            let segment = UnsafeBufferPointer(start: bytes + segmentStart, count: index - segmentStart)
            switch dotSegmentKind(segment) {
            case .plain: break
            case .dots: hasDotSegment = true
            case .encodedDots:
                throw Invalid(message: "url path has a percent-encoded dot segment (\(String(decoding: segment, as: UTF8.self))), "
                              + "which cannot be normalised safely")
            }
            segmentStart = index + 1
        }
        guard hasDotSegment else { return }
        // Each step takes "/segment" off the input; the output is written
        // over the same bytes, never ahead of the input.
        var read = pathStart
        var write = pathStart
        while read < end {
            var segmentEnd = read + 1
            while segmentEnd < end && bytes[segmentEnd] != 0x2F { segmentEnd += 1 }
            let length = segmentEnd - read - 1
            let isDot = length == 1 && bytes[read + 1] == 0x2E
            let isDotDot = length == 2 && bytes[read + 1] == 0x2E && bytes[read + 2] == 0x2E
            if isDot || isDotDot {
                if isDotDot {
                    // Drop the last output segment with its "/".
                    while write > pathStart {
                        write -= 1
                        if bytes[write] == 0x2F { break }
                    }
                }
                read = segmentEnd
                // "/." or "/.." at the end leaves the "/" of a directory.
                if read == end {
                    bytes[write] = 0x2F
                    write += 1
                }
                continue
            }
            while read < segmentEnd {
                bytes[write] = bytes[read]
                write += 1
                read += 1
            }
        }
        output.truncate(to: write)
    }

    private enum DotSegmentKind { case plain, dots, encodedDots }

    /// Whether a path segment is `.` or `..`, or would be once `%2E` is decoded.
    private static func dotSegmentKind(_ segment: UnsafeBufferPointer<UInt8>) -> DotSegmentKind {
        var dots = 0
        var encoded = false
        var index = 0
        while index < segment.count {
            if segment[index] == 0x2E {
                index += 1
            } else if segment[index] == 0x25, index + 2 < segment.count, segment[index + 1] == 0x32,
                      segment[index + 2] | 0x20 == 0x65 {
                encoded = true
                index += 3
            } else {
                return .plain
            }
            dots += 1
        }
        guard dots == 1 || dots == 2 else { return .plain }
        return encoded ? .encodedDots : .dots
    }

    @inline(__always)
    private static func asciiLowercased(_ byte: UInt8) -> UInt8 {
        byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
    }

    /// Percent-encodes what RFC 3986 does not allow in a path or query
    /// (non-ASCII, controls, space, `"<>\^`{|}`); existing `%XX` stay.
    private static func appendURISafe(_ text: UnsafeBufferPointer<UInt8>, _ range: Range<Int>, allowQuestionMark: Bool,
                                      to output: ByteBuffer) {
        // "!" / "$"…";" / "=" / "@"…"Z" / "_" / "a"…"z" / "~", one bit per ASCII byte.
        let low: UInt64 = allowQuestionMark ? 0xAFFF_FFF2_0000_0000 : 0x2FFF_FFF2_0000_0000
        let high: UInt64 = 0x47FF_FFFE_87FF_FFFF
        let hex = Hex.upper
        let out = output.reserve(range.count * 3)
        var written = 0
        for index in range {
            let byte = text[index]
            if byte < 128 && ((byte < 64 ? low : high) >> UInt64(byte & 63)) & 1 != 0 {
                out[written] = byte
                written += 1
            } else {
                out[written] = 0x25
                out[written + 1] = hex[Int(byte >> 4)]
                out[written + 2] = hex[Int(byte & 0x0F)]
                written += 3
            }
        }
        output.advance(by: written)
    }
}
