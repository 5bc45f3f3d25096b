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
