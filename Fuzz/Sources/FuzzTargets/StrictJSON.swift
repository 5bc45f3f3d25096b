/// The fuzz targets' judge of JSON text: RFC 8259 transcribed as plainly as
/// possible, independent of jansson and of the core's own checker (whose
/// verdicts it judges). Iterative, so that no nesting overflows its stack.
public enum StrictJSON {
    /// What a valid text holds besides its grammar.
    public struct Verdict: Equatable {
        /// The deepest nesting of objects and arrays (0 for a scalar).
        public var depth = 0
        /// Whether a `\u` escape leaves a surrogate unpaired: valid grammar
        /// (RFC 8259 §8.2), but jq and many parsers refuse the text.
        public var loneSurrogate = false
    }

    /// The verdict on `bytes` when they are exactly one JSON value with
    /// optional whitespace around it, in UTF-8 (§8.1); nil otherwise.
    public static func check<Bytes: Collection>(_ bytes: Bytes) -> Verdict? where Bytes.Element == UInt8 {
        let text = Array(bytes)
        // §8.1: the whole text is UTF-8. Outside strings only ASCII can
        // pass the grammar, so checking the whole text up front is enough.
        guard String(validating: text, as: UTF8.self) != nil else { return nil }
        var reader = Reader(text: text)
        return reader.document()
    }

    private struct Reader {
        let text: [UInt8]
        var index = 0
        var verdict = Verdict()

        init(text: [UInt8]) { self.text = text }

        var current: UInt8? { index < text.count ? text[index] : nil }

        mutating func skipWhitespace() {
            while let byte = current, byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D { index += 1 }
        }

        mutating func document() -> Verdict? {
            // What is open: `{` or `[`, innermost last.
            var open: [UInt8] = []
            var wantValue = true
            while true {
                skipWhitespace()
                if wantValue {
                    guard let byte = current else { return nil }
                    switch byte {
                    case UInt8(ascii: "{"), UInt8(ascii: "["):
                        index += 1
                        open.append(byte)
                        verdict.depth = max(verdict.depth, open.count)
                        skipWhitespace()
                        if current == (byte == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                            index += 1
                            open.removeLast()
                            wantValue = false
                            continue
                        }
                        if byte == UInt8(ascii: "{") {
                            guard key() else { return nil }
                        }
                        continue
                    case UInt8(ascii: "\""):
                        guard string() else { return nil }
                    case UInt8(ascii: "t"):
                        guard literal("true") else { return nil }
                    case UInt8(ascii: "f"):
                        guard literal("false") else { return nil }
                    case UInt8(ascii: "n"):
                        guard literal("null") else { return nil }
                    default:
                        guard number() else { return nil }
                    }
                    wantValue = false
                    continue
                }
                // After a value: the end, a separator, or a close.
                guard let innermost = open.last else { return current == nil ? verdict : nil }
                guard let byte = current else { return nil }
                if byte == UInt8(ascii: ",") {
                    index += 1
                    if innermost == UInt8(ascii: "{") {
                        skipWhitespace()
                        guard key() else { return nil }
                    }
                    wantValue = true
                } else if byte == (innermost == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")) {
                    index += 1
                    open.removeLast()
                } else {
                    return nil
                }
            }
        }

        /// A member's name and its colon; the value follows.
        mutating func key() -> Bool {
            guard current == UInt8(ascii: "\""), string() else { return false }
            skipWhitespace()
            guard current == UInt8(ascii: ":") else { return false }
            index += 1
            return true
        }

        mutating func literal(_ word: String) -> Bool {
            for byte in word.utf8 {
                guard current == byte else { return false }
                index += 1
            }
            return true
        }

        /// §6: `-`? (`0` / [1-9][0-9]*) (`.` [0-9]+)? ([eE] [+-]? [0-9]+)?
        mutating func number() -> Bool {
            func isDigit(_ byte: UInt8?) -> Bool { byte.map { (0x30...0x39).contains($0) } ?? false }
            if current == UInt8(ascii: "-") { index += 1 }
            guard isDigit(current) else { return false }
            if current == UInt8(ascii: "0") {
                index += 1
            } else {
                while isDigit(current) { index += 1 }
            }
            if current == UInt8(ascii: ".") {
                index += 1
                guard isDigit(current) else { return false }
                while isDigit(current) { index += 1 }
            }
            if current == UInt8(ascii: "e") || current == UInt8(ascii: "E") {
                index += 1
                if current == UInt8(ascii: "+") || current == UInt8(ascii: "-") { index += 1 }
                guard isDigit(current) else { return false }
                while isDigit(current) { index += 1 }
            }
            return true
        }

        /// §7, from the opening quote to just past the closing one.
        mutating func string() -> Bool {
            index += 1
            while let byte = current {
                index += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return true
                case 0x00..<0x20:
                    return false
                case UInt8(ascii: "\\"):
                    guard let escape = current else { return false }
                    index += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"), UInt8(ascii: "b"), UInt8(ascii: "f"),
                         UInt8(ascii: "n"), UInt8(ascii: "r"), UInt8(ascii: "t"):
                        continue
                    case UInt8(ascii: "u"):
                        guard let unit = hexQuad() else { return false }
                        if (0xDC00...0xDFFF).contains(unit) {
                            verdict.loneSurrogate = true
                        } else if (0xD800...0xDBFF).contains(unit) {
                            // A high surrogate pairs only with a low one escaped right after it.
                            let saved = index
                            if current == UInt8(ascii: "\\") {
                                index += 1
                                if current == UInt8(ascii: "u") {
                                    index += 1
                                    if let next = hexQuad(), (0xDC00...0xDFFF).contains(next) { continue }
                                }
                            }
                            index = saved
                            verdict.loneSurrogate = true
                        }
                    default:
                        return false
                    }
                default:
                    continue
                }
            }
            return false
        }

        /// Four hex digits after `\u`.
        mutating func hexQuad() -> UInt32? {
            var value: UInt32 = 0
            for _ in 0..<4 {
                guard let byte = current else { return nil }
                let digit: UInt32
                switch byte {
                case 0x30...0x39: digit = UInt32(byte - 0x30)
                case 0x41...0x46: digit = UInt32(byte - 0x41 + 10)
                case 0x61...0x66: digit = UInt32(byte - 0x61 + 10)
                default: return nil
                }
                value = value << 4 | digit
                index += 1
            }
            return value
        }
    }
}
