import CJansson
import Glibc

/// Compact JSON written straight into a byte buffer. jansson's own dump goes
/// through a callback per token and decodes every code point; the output of
/// a filter is mostly long strings, which this copies in runs.
extension ByteBuffer {
    /// Appends `value` as compact JSON, object members in stored order.
    public func appendJSON(_ value: JSON) {
        appendJSON(raw: value.raw)
    }

    /// Appends a jansson value as compact JSON.
    func appendJSON(raw value: UnsafeMutablePointer<json_t>) {
        switch value.pointee.type {
        case JSON_OBJECT:
            append(0x7B)
            var first = true
            var iterator = json_object_iter(value)
            while let current = iterator {
                if !first { append(0x2C) }
                first = false
                if let key = json_object_iter_key(current) {
                    key.withMemoryRebound(to: UInt8.self, capacity: 1) {
                        appendJSONString(UnsafeBufferPointer(start: $0, count: json_object_iter_key_len(current)))
                    }
                }
                append(0x3A)
                if let member = json_object_iter_value(current) { appendJSON(raw: member) } else { append("null") }
                iterator = json_object_iter_next(value, current)
            }
            append(0x7D)
        case JSON_ARRAY:
            append(0x5B)
            for index in 0..<json_array_size(value) {
                if index > 0 { append(0x2C) }
                if let element = json_array_get(value, index) { appendJSON(raw: element) }
            }
            append(0x5D)
        case JSON_STRING:
            let length = json_string_length(value)
            if let chars = json_string_value(value) {
                chars.withMemoryRebound(to: UInt8.self, capacity: max(length, 1)) {
                    appendJSONString(UnsafeBufferPointer(start: $0, count: length))
                }
            }
        case JSON_INTEGER:
            appendDecimal(Int64(json_integer_value(value)))
        case JSON_REAL:
            // Swift prints the shortest text that reads back as the same double.
            append(utf8: json_real_value(value).description)
        case JSON_TRUE:
            append("true")
        case JSON_FALSE:
            append("false")
        default:
            append("null")
        }
    }

    /// Appends `bytes` (valid UTF-8) as a JSON string: quotes, backslashes
    /// and control characters escaped, everything else copied in runs.
    public func appendJSONString(_ bytes: UnsafeBufferPointer<UInt8>) {
        let out = reserve(bytes.count * 6 + 2)
        out[0] = 0x22
        var written = 1
        if let base = bytes.baseAddress {
            let count = bytes.count
            var runStart = 0
            while true {
                let index = JSONScan.nextEscape(base, from: runStart, count: count)
                let run = index - runStart
                if run > 4 {
                    memcpy(out + written, base + runStart, run)
                } else {
                    for offset in 0..<run { out[written + offset] = base[runStart + offset] }
                }
                written += run
                if index == count { break }
                written += JSONScan.writeEscape(base[index], to: out + written)
                runStart = index + 1
            }
        }
        out[written] = 0x22
        advance(by: written + 1)
    }

    /// Appends a string as a JSON string.
    public func appendJSONString(_ text: String) {
        var text = text
        text.withUTF8 { appendJSONString($0) }
    }

    /// Appends the JSON text `bytes` (known to be valid) without the
    /// whitespace between its tokens.
    public func appendMinified(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        var runStart = 0
        var index = 0
        while index < count {
            let byte = base[index]
            if byte == 0x22 {
                index = JSONScan.stringEnd(base, from: index + 1, count: count)
                continue
            }
            if JSONScan.isWhitespace(byte) {
                if index > runStart { append(UnsafeBufferPointer(start: base + runStart, count: index - runStart)) }
                runStart = index + 1
            }
            index += 1
        }
        if count > runStart { append(UnsafeBufferPointer(start: base + runStart, count: count - runStart)) }
    }
}

/// The byte scans JSON writing and reading need.
public enum JSONScan {
    /// JSON's whitespace between tokens (RFC 8259 §2).
    @inlinable @inline(__always)
    public static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// The index of the first byte from `index` on that a JSON string must
    /// escape (a control character, `"` or `\`), or `count` when there is none.
    @inlinable @inline(__always)
    public static func nextEscape(_ base: UnsafePointer<UInt8>, from index: Int, count: Int) -> Int {
        // A byte below 0x20, or equal to 0x22 or 0x5C, sets its high bit in
        // `found`. Borrows only run upward from a real match, so the lowest
        // set bit is always a real one; bytes of 0x80 and above never match.
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

    /// The index just past the `"` that closes a string of valid JSON text
    /// whose contents start at `index`, or `count` when it is not closed.
    /// Valid JSON has no raw control characters in strings, so the escape
    /// scan finds only `"` and `\` there.
    static func stringEnd(_ base: UnsafePointer<UInt8>, from index: Int, count: Int) -> Int {
        var position = index
        while position < count {
            position = nextEscape(base, from: position, count: count)
            guard position < count else { break }
            if base[position] == 0x22 { return position + 1 }
            position += base[position] == 0x5C ? 2 : 1
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
            out[1] = 0x75
            out[2] = 0x30
            out[3] = 0x30
            out[4] = Hex.lower[Int(byte >> 4)]
            out[5] = Hex.lower[Int(byte & 0x0F)]
            return 6
        }
        return 2
    }
}
