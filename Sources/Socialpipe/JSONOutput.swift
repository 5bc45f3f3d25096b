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
        JSONText.escapeString(bytes) { write($0) }
    }

    /// Appends a string as a JSON string.
    public func writeJSONString(_ text: String) {
        var text = text
        text.withUTF8 { writeJSONString($0) }
    }

    /// Appends the JSON text `bytes` (known to be valid) without the
    /// whitespace between its tokens.
    public func writeMinified(_ bytes: UnsafeBufferPointer<UInt8>) {
        var runStart = 0
        var index = 0
        var inString = false
        let count = bytes.count
        while index < count {
            let byte = bytes[index]
            if inString {
                if byte == 0x5C {
                    index += 2
                    continue
                }
                if byte == 0x22 { inString = false }
            } else if byte == 0x22 {
                inString = true
            } else if byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D {
                if index > runStart { write(UnsafeBufferPointer(rebasing: bytes[runStart..<index])) }
                runStart = index + 1
            }
            index += 1
        }
        if count > runStart { write(UnsafeBufferPointer(rebasing: bytes[runStart..<min(count, bytes.count)])) }
    }
}
