import CJansson
import Glibc

/// Compact JSON written straight into the output buffer. jansson's own dump
/// goes through a callback per token and decodes every code point; the
/// output of a filter is mostly long strings, which this copies in runs.
extension OutputWriter {
    /// Appends `value` as compact JSON, object members in stored order.
    public func writeJSON(_ value: JSON) {
        writeJSON(raw: value.raw)
    }

    /// Appends a jansson value as compact JSON.
    func writeJSON(raw value: UnsafeMutablePointer<json_t>) {
        switch value.pointee.type {
        case JSON_OBJECT:
            writeByte(0x7B)
            var first = true
            var iterator = json_object_iter(value)
            while let current = iterator {
                if !first { writeByte(0x2C) }
                first = false
                if let key = json_object_iter_key(current) {
                    key.withMemoryRebound(to: UInt8.self, capacity: 1) {
                        writeJSONString(UnsafeBufferPointer(start: $0, count: strlen(key)))
                    }
                }
                writeByte(0x3A)
                if let member = json_object_iter_value(current) { writeJSON(raw: member) } else { write("null") }
                iterator = json_object_iter_next(value, current)
            }
            writeByte(0x7D)
        case JSON_ARRAY:
            writeByte(0x5B)
            for index in 0..<json_array_size(value) {
                if index > 0 { writeByte(0x2C) }
                if let element = json_array_get(value, index) { writeJSON(raw: element) }
            }
            writeByte(0x5D)
        case JSON_STRING:
            let length = json_string_length(value)
            if let chars = json_string_value(value) {
                chars.withMemoryRebound(to: UInt8.self, capacity: max(length, 1)) {
                    writeJSONString(UnsafeBufferPointer(start: $0, count: length))
                }
            }
        case JSON_INTEGER:
            writeDecimal(Int64(json_integer_value(value)))
        case JSON_REAL:
            // Swift prints the shortest text that reads back as the same double.
            write(json_real_value(value).description)
        case JSON_TRUE:
            write("true")
        case JSON_FALSE:
            write("false")
        default:
            write("null")
        }
    }

    /// Appends a decimal integer.
    public func writeDecimal(_ number: Int64) {
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)
        withUnsafeMutableBytes(of: &digits) { scratch in
            var magnitude = number.magnitude
            var position = scratch.count
            repeat {
                position -= 1
                scratch[position] = UInt8(truncatingIfNeeded: magnitude % 10) + 0x30
                magnitude /= 10
            } while magnitude > 0
            if number < 0 {
                position -= 1
                scratch[position] = 0x2D
            }
            write(UnsafeBufferPointer(rebasing: scratch.bindMemory(to: UInt8.self)[position...]))
        }
    }

    /// Appends `bytes` (valid UTF-8) as a JSON string.
    public func writeJSONString(_ bytes: UnsafeBufferPointer<UInt8>) {
        writeByte(0x22)
        if let base = bytes.baseAddress {
            let count = bytes.count
            var runStart = 0
            while true {
                let index = JSONText.nextEscape(base, from: runStart, count: count)
                if index > runStart { write(UnsafeBufferPointer(start: base + runStart, count: index - runStart)) }
                if index == count { break }
                withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 6) { escape in
                    guard let out = escape.baseAddress else { return }
                    write(UnsafeBufferPointer(start: out, count: JSONText.writeEscape(base[index], to: out)))
                }
                runStart = index + 1
            }
        }
        writeByte(0x22)
    }

    /// Appends a string as a JSON string.
    public func writeJSONString(_ text: String) {
        var text = text
        text.withUTF8 { writeJSONString($0) }
    }

    /// The index just past the `"` that closes a JSON string whose text
    /// starts at `index`, or `count` when it is not closed.
    private static func stringEnd(_ base: UnsafePointer<UInt8>, from index: Int, count: Int) -> Int {
        // Eight bytes at a time, as in `JSONText.nextEscape`: only `"` and `\` stop the scan.
        let ones: UInt64 = 0x0101_0101_0101_0101
        let highs: UInt64 = 0x8080_8080_8080_8080
        var position = index
        while position < count {
            if position + 8 <= count {
                let word = UInt64(littleEndian: UnsafeRawPointer(base + position).loadUnaligned(as: UInt64.self))
                let quote = word ^ (ones &* 0x22)
                let backslash = word ^ (ones &* 0x5C)
                let found = ((quote &- ones) | (backslash &- ones)) & ~word & highs
                if found == 0 {
                    position += 8
                    continue
                }
                position += found.trailingZeroBitCount / 8
            }
            let byte = base[position]
            if byte == 0x22 { return position + 1 }
            position += byte == 0x5C ? 2 : 1
        }
        return count
    }

    /// Appends the JSON text `bytes` (known to be valid) without the
    /// whitespace between its tokens.
    public func writeMinified(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard let base = bytes.baseAddress else { return }
        let count = bytes.count
        var runStart = 0
        var index = 0
        while index < count {
            let byte = base[index]
            if byte == 0x22 {
                index = Self.stringEnd(base, from: index + 1, count: count)
                continue
            }
            if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                if index > runStart { write(UnsafeBufferPointer(start: base + runStart, count: index - runStart)) }
                runStart = index + 1
            }
            index += 1
        }
        if count > runStart { write(UnsafeBufferPointer(start: base + runStart, count: count - runStart)) }
    }
}
