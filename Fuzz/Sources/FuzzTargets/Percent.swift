@testable import Socialpipe

/// `PercentEncoding` (RFC 3986 §2.1 as RFC 5849 §3.6 uses it, and form
/// decoding): encoding leaves only unreserved bytes and `%XX` in upper
/// case; decoding an encoding gives the bytes back; encoding twice is
/// encoding the encoding; pairs read from any query survive being written
/// and read again.
public enum Percent {
    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        let bytes = Array(data)
        let encoded = encode(bytes)
        var index = 0
        while index < encoded.count {
            let byte = encoded[index]
            if byte == 0x25 {
                require(index + 2 < encoded.count && isUpperHex(encoded[index + 1]) && isUpperHex(encoded[index + 2]),
                        "encoding has a bare %: \(escaped(encoded))")
                index += 3
            } else {
                require(PercentEncoding.isUnreserved(byte), "encoding left a reserved byte: \(escaped(encoded))")
                index += 1
            }
        }
        require(decode(encoded) == bytes, "decoding the encoding of \(escaped(bytes)) gives \(escaped(decode(encoded)))")
        if let text = String(validating: bytes, as: UTF8.self) {
            require(Array(PercentEncoding.encoded(text).utf8) == encoded, "encoded(String) differs from encode(bytes)")
        }

        let twice = ByteBuffer()
        bytes.withUnsafeBufferPointer { PercentEncoding.encodeTwice($0, into: twice) }
        require(twice.array == encode(encoded), "encodeTwice(x) is not encode(encode(x)) for \(escaped(bytes))")

        let decodedThenTwice = ByteBuffer()
        bytes.withUnsafeBufferPointer { PercentEncoding.decodeFormEncodeTwice($0, into: decodedThenTwice) }
        require(decodedThenTwice.array == encode(encode(decode(bytes))),
                "decodeFormEncodeTwice(x) is not encode(encode(decode(x))) for \(escaped(bytes))")

        // Pairs: each non-empty piece between `&`s is one pair.
        let pairs = PercentEncoding.formPairs(bytes)
        let pieces = bytes.split(separator: 0x26, omittingEmptySubsequences: true)
        require(pairs.count == pieces.count, "\(pairs.count) pairs read from \(pieces.count) pieces of \(escaped(bytes))")
        for (pair, piece) in zip(pairs, pieces) {
            let equals = piece.firstIndex(of: 0x3D)
            require(pair.name == decode(Array(piece[..<(equals ?? piece.endIndex)]))
                    && pair.value == decode(equals.map { Array(piece[($0 + 1)...]) } ?? []),
                    "the pair read from \(escaped(Array(piece))) is \(escaped(pair.name)) = \(escaped(pair.value))")
        }
        let written = PercentEncoding.formEncoded(pairs)
        require(PercentEncoding.formPairs(written) == pairs, "pairs written as \(escaped(written)) read back differently")
    }

    static func isUpperHex(_ byte: UInt8) -> Bool { (0x30...0x39).contains(byte) || (0x41...0x46).contains(byte) }

    static func encode(_ bytes: [UInt8]) -> [UInt8] {
        let output = ByteBuffer()
        bytes.withUnsafeBufferPointer { PercentEncoding.encode($0, into: output) }
        return output.array
    }

    static func decode(_ bytes: [UInt8]) -> [UInt8] {
        var output: [UInt8] = []
        bytes.withUnsafeBufferPointer { PercentEncoding.forEachFormDecodedByte($0) { output.append($0) } }
        return output
    }
}
