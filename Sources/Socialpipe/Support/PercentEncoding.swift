/// 1 for each RFC 3986 unreserved byte, 0 for the others: one load per
/// byte in the encoding loops instead of range tests.
private let unreservedTable: [UInt8] = (0...255).map { PercentEncoding.isUnreserved(UInt8($0)) ? 1 : 0 }

/// RFC 3986 percent-encoding as OAuth 1.0a uses it (RFC 5849 §3.6), and the
/// `application/x-www-form-urlencoded` decoding of queries and form bodies.
public enum PercentEncoding {
    /// RFC 3986 unreserved: ALPHA / DIGIT / "-" / "." / "_" / "~".
    static func isUnreserved(_ byte: UInt8) -> Bool {
        switch byte {
        case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: return true
        default: return false
        }
    }

    /// Encodes `source` into `destination`, which has room for three bytes
    /// per source byte; returns the bytes written.
    public static func encode(_ source: UnsafeBufferPointer<UInt8>, to destination: UnsafeMutablePointer<UInt8>) -> Int {
        let hex = Hex.upper
        return unreservedTable.withUnsafeBufferPointer { table in
            var written = 0
            for byte in source {
                if table[Int(byte)] != 0 {
                    destination[written] = byte
                    written &+= 1
                } else {
                    destination[written] = 0x25
                    destination[written &+ 1] = hex[Int(byte >> 4)]
                    destination[written &+ 2] = hex[Int(byte & 0x0F)]
                    written &+= 3
                }
            }
            return written
        }
    }

    /// Appends the encoding of `bytes`.
    public static func encode(_ bytes: UnsafeBufferPointer<UInt8>, into output: ByteBuffer) {
        let written = encode(bytes, to: output.reserve(bytes.count * 3))
        output.advance(by: written)
    }

    /// Writes the encoding of the encoding of `byte` (`%` itself becomes
    /// `%25`, so a reserved byte becomes `%25XX`); returns the bytes written.
    @inline(__always)
    private static func encodeTwice(_ byte: UInt8, table: UnsafeBufferPointer<UInt8>,
                                    to destination: UnsafeMutablePointer<UInt8>) -> Int {
        if table[Int(byte)] != 0 {
            destination[0] = byte
            return 1
        }
        let hex = Hex.upper
        destination[0] = 0x25
        destination[1] = 0x32
        destination[2] = 0x35
        destination[3] = hex[Int(byte >> 4)]
        destination[4] = hex[Int(byte & 0x0F)]
        return 5
    }

    /// Appends the encoding of the encoding of `bytes`, as a signature base
    /// string holds parameters.
    public static func encodeTwice(_ bytes: UnsafeBufferPointer<UInt8>, into output: ByteBuffer) {
        let destination = output.reserve(bytes.count * 5)
        let written = unreservedTable.withUnsafeBufferPointer { table in
            var written = 0
            for byte in bytes { written &+= encodeTwice(byte, table: table, to: destination + written) }
            return written
        }
        output.advance(by: written)
    }

    /// Calls `body` with each byte of a form-decoded component: `+` is a
    /// space, `%XX` a byte; a `%` not followed by two hex digits stays as it is.
    @inline(__always)
    static func forEachFormDecodedByte(_ component: UnsafeBufferPointer<UInt8>, _ body: (UInt8) -> Void) {
        var index = 0
        let count = component.count
        while index < count {
            var byte = component[index]
            if byte == 0x2B {
                byte = 0x20
            } else if byte == 0x25, index + 2 < count,
                      let high = hexValue(component[index + 1]), let low = hexValue(component[index + 2]) {
                byte = high << 4 | low
                index += 2
            }
            body(byte)
            index &+= 1
        }
    }

    /// Form-decodes `component` and appends the encoding of the encoding of
    /// the result, without building the decoded bytes.
    public static func decodeFormEncodeTwice(_ component: UnsafeBufferPointer<UInt8>, into output: ByteBuffer) {
        let destination = output.reserve(component.count * 5)
        let written = unreservedTable.withUnsafeBufferPointer { table in
            var written = 0
            forEachFormDecodedByte(component) { written &+= encodeTwice($0, table: table, to: destination + written) }
            return written
        }
        output.advance(by: written)
    }

    /// Calls `body` with the name and value of each `name=value` piece of a
    /// query or form body, still encoded; a name without `=` has an empty
    /// value, empty pieces are skipped (RFC 5849 §3.4.1.3.1).
    @inlinable
    public static func forEachFormPair(_ bytes: UnsafeBufferPointer<UInt8>,
                                       _ body: (UnsafeBufferPointer<UInt8>, UnsafeBufferPointer<UInt8>) -> Void) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        var start = 0
        while start < count {
            var end = start
            var equals = -1
            while end < count {
                let byte = base[end]
                if byte == 0x26 { break }
                if byte == 0x3D && equals < 0 { equals = end }
                end += 1
            }
            if end > start {
                if equals >= 0 {
                    body(UnsafeBufferPointer(start: base + start, count: equals - start),
                         UnsafeBufferPointer(start: base + equals + 1, count: end - equals - 1))
                } else {
                    body(UnsafeBufferPointer(start: base + start, count: end - start),
                         UnsafeBufferPointer(start: base + end, count: 0))
                }
            }
            start = end + 1
        }
    }

    /// The encoded form of a string's UTF-8.
    public static func encoded(_ text: String) -> String {
        let output = ByteBuffer(capacity: text.utf8.count * 3)
        var text = text
        text.withUTF8 { encode($0, into: output) }
        return String(decoding: output.bytes, as: UTF8.self)
    }

    @inline(__always)
    static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case 0x30...0x39: return byte - 0x30
        case 0x41...0x46: return byte - 0x41 + 10
        case 0x61...0x66: return byte - 0x61 + 10
        default: return nil
        }
    }

    /// Splits a query or form body into decoded name/value pairs (RFC 5849
    /// §3.4.1.3.1); a name without `=` has an empty value, empty pieces are skipped.
    public static func formPairs(_ bytes: [UInt8]) -> [Parameter] {
        func decoded(_ component: UnsafeBufferPointer<UInt8>) -> [UInt8] {
            var output: [UInt8] = []
            output.reserveCapacity(component.count)
            forEachFormDecodedByte(component) { output.append($0) }
            return output
        }
        var pairs: [Parameter] = []
        bytes.withUnsafeBufferPointer { bytes in
            forEachFormPair(bytes) { pairs.append(Parameter(name: decoded($0), value: decoded($1))) }
        }
        return pairs
    }

    /// `name=value&…` with both sides percent-encoded, in the given order.
    public static func formEncoded(_ pairs: [Parameter]) -> [UInt8] {
        let output = ByteBuffer()
        for (index, pair) in pairs.enumerated() {
            if index > 0 { output.append(0x26) }
            pair.name.withUnsafeBufferPointer { encode($0, into: output) }
            output.append(0x3D)
            pair.value.withUnsafeBufferPointer { encode($0, into: output) }
        }
        return output.array
    }
}

/// One request parameter as raw (decoded) bytes.
public struct Parameter: Sendable, Equatable {
    public var name: [UInt8]
    public var value: [UInt8]
    public init(name: [UInt8], value: [UInt8]) {
        self.name = name
        self.value = value
    }
    public init(_ name: String, _ value: String) {
        self.name = Array(name.utf8)
        self.value = Array(value.utf8)
    }
}
