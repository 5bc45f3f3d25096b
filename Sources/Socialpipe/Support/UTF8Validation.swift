/// UTF-8 checks on raw input bytes: Swift's String initialisers repair bad
/// sequences silently, and the contract wants them refused with a position.
public enum UTF8Validation {
    /// The 0-based offset of the first byte that is not part of a valid
    /// UTF-8 sequence, or nil when all of `bytes` is valid.
    public static func firstInvalidOffset(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard let base = bytes.baseAddress else { return nil }
        var index = 0
        let count = bytes.count
        while index < count {
            // ASCII runs 32 bytes at a time (a whole answer is checked before
            // it is read), then eight.
            if index + 32 <= count {
                let words = UnsafeRawPointer(base + index)
                let any = words.loadUnaligned(as: UInt64.self) | words.loadUnaligned(fromByteOffset: 8, as: UInt64.self)
                    | words.loadUnaligned(fromByteOffset: 16, as: UInt64.self) | words.loadUnaligned(fromByteOffset: 24, as: UInt64.self)
                if any & 0x8080_8080_8080_8080 == 0 {
                    index += 32
                    continue
                }
            }
            if index + 8 <= count,
               UnsafeRawPointer(base + index).loadUnaligned(as: UInt64.self) & 0x8080_8080_8080_8080 == 0 {
                index += 8
                continue
            }
            let lead = base[index]
            if lead < 0x80 { index += 1; continue }
            let length: Int
            var lower: UInt8 = 0x80
            var upper: UInt8 = 0xBF
            switch lead {
            case 0xC2...0xDF: length = 2
            case 0xE0: length = 3; lower = 0xA0
            case 0xE1...0xEC, 0xEE...0xEF: length = 3
            case 0xED: length = 3; upper = 0x9F
            case 0xF0: length = 4; lower = 0x90
            case 0xF1...0xF3: length = 4
            case 0xF4: length = 4; upper = 0x8F
            default: return index
            }
            guard index + length <= count else { return index }
            let second = base[index + 1]
            guard second >= lower && second <= upper else { return index }
            if length > 2 && base[index + 2] & 0xC0 != 0x80 { return index }
            if length > 3 && base[index + 3] & 0xC0 != 0x80 { return index }
            index += length
        }
        return nil
    }

    /// `bytes` as a string, each invalid sequence replaced by U+FFFD.
    public static func repaired<Bytes: Collection>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
        String(decoding: bytes, as: UTF8.self)
    }
}
