import CLinux

/// The byte scans of JSON text, written once: the writer's search for what
/// a string must escape, the check of input (`JSONValidation`), the reading
/// of a checked text in place (`RawJSON`), and the lexical scan of a line
/// that did not parse (`Redaction.redactedRaw`). Each reads `base[0..<count]`
/// and never past `count`, whatever the text holds.
public enum JSONScan {
    /// JSON's whitespace between tokens (RFC 8259 §2).
    @inlinable @inline(__always)
    public static func isWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x0A || byte == 0x0D || byte == 0x09
    }

    /// The index of the first byte from `index` on that is not whitespace, or `count`.
    @inline(__always)
    static func skipSpace(_ base: UnsafePointer<UInt8>, from index: Int, count: Int) -> Int {
        var position = index
        while position < count && isWhitespace(base[position]) { position += 1 }
        return position
    }

    /// The index of the first byte from `index` on that a JSON string must
    /// escape (a control character, `"` or `\`), or `count` when there is none;
    /// with `nonASCII`, also the first byte of 0x80 and above. `quote` other
    /// than `"` finds the end of a string quoted with it instead (`'`, as
    /// Python prints one). Sixteen bytes at a time (CLinux's sp_next_escape).
    @inlinable @inline(__always)
    public static func nextEscape(_ base: UnsafePointer<UInt8>, from index: Int, count: Int, quote: UInt8 = 0x22,
                                  nonASCII: Bool = false) -> Int {
        sp_next_escape(base, index, count, quote, nonASCII ? 1 : 0)
    }

    /// Whether the bytes from `index` up to `end` are all ASCII digits (an
    /// id's 19 in two overlapping compares of sixteen; CLinux's sp_all_digits).
    @inlinable @inline(__always)
    public static func allDigits(_ base: UnsafePointer<UInt8>, from index: Int, to end: Int) -> Bool {
        sp_all_digits(base, index, end) != 0
    }

    /// The index of the first byte from `index` on that is not an ASCII
    /// digit, or `count`; sixteen bytes at a time (CLinux's sp_digits_end).
    @inlinable @inline(__always)
    public static func digitsEnd(_ base: UnsafePointer<UInt8>, from index: Int, count: Int) -> Int {
        sp_digits_end(base, index, count)
    }

    /// The index just past the `quote` that closes a string whose contents
    /// start at `index`, or `count` when it is not closed. A backslash
    /// escapes the byte after it; a raw control character (never in valid
    /// JSON) is passed over.
    static func stringEnd(_ base: UnsafePointer<UInt8>, from index: Int, count: Int, quote: UInt8 = 0x22) -> Int {
        var position = index
        while position < count {
            position = nextEscape(base, from: position, count: count, quote: quote)
            guard position < count else { break }
            if base[position] == quote { return position + 1 }
            position += base[position] == 0x5C ? 2 : 1
        }
        return count
    }

    /// The index just past the value that starts at `index` (which is not
    /// whitespace), or `count` when the text ends first: a string quoted
    /// with `"` or `'`; an object or array up to its matching close, the
    /// strings in it passed over; any other token up to whitespace, `,`,
    /// `}` or `]`. A `'` cannot open a value of valid JSON, so on a checked
    /// text this is the grammar's value; on a broken line, the lexical
    /// value redaction hides.
    static func valueEnd(_ base: UnsafePointer<UInt8>, from index: Int, count: Int) -> Int {
        guard index < count else { return count }
        let first = base[index]
        switch first {
        case 0x22, 0x27:
            return stringEnd(base, from: index + 1, count: count, quote: first)
        case 0x7B, 0x5B:
            var depth = 0
            var position = index
            while position < count {
                let byte = base[position]
                if byte == 0x22 || byte == 0x27 {
                    position = stringEnd(base, from: position + 1, count: count, quote: byte)
                    continue
                }
                if byte == 0x7B || byte == 0x5B {
                    depth += 1
                } else if byte == 0x7D || byte == 0x5D {
                    depth -= 1
                    if depth == 0 { return position + 1 }
                }
                position += 1
            }
            return count
        default:
            var position = index
            while position < count {
                let byte = base[position]
                if isWhitespace(byte) || byte == 0x2C || byte == 0x7D || byte == 0x5D { break }
                position += 1
            }
            return position
        }
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
