import CJansson
import Glibc

/// JSON strings written directly as bytes, for output a tool assembles
/// itself; cheaper than building a jansson value only to serialise it.
public enum JSONText {
    /// The index of the first byte from `index` on that a JSON string must
    /// escape (a control character, `"` or `\`), or `count` when there is none.
    @inlinable @inline(__always)
    public static func nextEscape(_ base: UnsafePointer<UInt8>, from index: Int, count: Int) -> Int {
        // Eight bytes at a time: a byte below 0x20, or equal to 0x22 or 0x5C,
        // sets its high bit in `found`. Borrows only run upward from a real
        // match, so the lowest set bit is always a real one; bytes of 0x80 and
        // above never match.
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var position = index
        while position + 8 <= count {
            let word = UInt64(littleEndian: UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
            let quote = word ^ (ones &* 0x22)
            let backslash = word ^ (ones &* 0x5C)
            let found = ((word &- ones &* 0x20) | (quote &- ones) | (backslash &- ones)) & ~word & highs
            if found != 0 { return position + found.trailingZeroBitCount / 8 }
            position += 8
        }
        while position < count {
            let byte = base[position]
            if byte < 0x20 || byte == 0x22 || byte == 0x5C { return position }
            position += 1
        }
        return count
    }

    /// Writes the escape sequence of a byte `nextEscape` stopped at (at most
    /// six bytes); returns the bytes written.
    @inlinable @inline(__always)
    public static func writeEscape(_ byte: UInt8, to out: UnsafeMutablePointer<UInt8>) -> Int {
        out[0] = 0x5C
        switch byte {
        case 0x22, 0x5C: out[1] = byte
        case 0x0A: out[1] = 0x6E
        case 0x0D: out[1] = 0x72
        case 0x09: out[1] = 0x74
        case 0x08: out[1] = 0x62
        case 0x0C: out[1] = 0x66
        default:
            let hex = ("0123456789abcdef" as StaticString).utf8Start
            out[1] = 0x75
            out[2] = 0x30
            out[3] = 0x30
            out[4] = hex[Int(byte >> 4)]
            out[5] = hex[Int(byte & 0x0F)]
            return 6
        }
        return 2
    }

    /// Writes `bytes` (valid UTF-8) as a JSON string to `out`, which has
    /// room for `bytes.count * 6 + 2`: quotes, backslashes and control
    /// characters escaped, all else copied in runs. Returns the bytes written.
    public static func writeString(_ bytes: UnsafeBufferPointer<UInt8>, to out: UnsafeMutablePointer<UInt8>) -> Int {
        out[0] = 0x22
        var written = 1
        if let base = bytes.baseAddress {
            let count = bytes.count
            var runStart = 0
            while true {
                let index = nextEscape(base, from: runStart, count: count)
                let run = index - runStart
                if run > 4 {
                    memcpy(out + written, base + runStart, run)
                } else {
                    for offset in 0..<run { out[written + offset] = base[runStart + offset] }
                }
                written += run
                if index == count { break }
                written += writeEscape(base[index], to: out + written)
                runStart = index + 1
            }
        }
        out[written] = 0x22
        return written + 1
    }

    /// Appends `bytes` (valid UTF-8) as a JSON string.
    public static func appendString(_ bytes: UnsafeBufferPointer<UInt8>, to output: ByteBuffer) {
        output.advance(by: writeString(bytes, to: output.reserve(bytes.count * 6 + 2)))
    }
}
