@testable import Socialpipe
import Testing

/// `body` with the bytes of `text`.
private func scanning<Result>(_ text: String, _ body: (UnsafePointer<UInt8>, Int) -> Result) -> Result {
    Array(text.utf8).withUnsafeBufferPointer { body($0.baseAddress!, $0.count) }
}

@Suite struct JSONScanTests {
    @Test func aStringEndsAfterItsOwnQuoteEscapesIncluded() {
        #expect(scanning(#""ab\"c" x"#) { JSONScan.stringEnd($0, from: 1, count: $1) } == 7)
        #expect(scanning(#"'a"b' x"#) { JSONScan.stringEnd($0, from: 1, count: $1, quote: 0x27) } == 5)
        #expect(scanning(#"'it\'s' x"#) { JSONScan.stringEnd($0, from: 1, count: $1, quote: 0x27) } == 7)
        // Unclosed, or a backslash as the last byte: the end of the text.
        #expect(scanning(#""abc"#) { JSONScan.stringEnd($0, from: 1, count: $1) } == 4)
        #expect(scanning(#""abc\"#) { JSONScan.stringEnd($0, from: 1, count: $1) } == 5)
        // A raw control character (a broken line) is passed over.
        #expect(scanning("\"a\u{1}b\" x") { JSONScan.stringEnd($0, from: 1, count: $1) } == 5)
    }

    @Test func theEscapeSearchStopsAtTheQuoteItIsGiven() {
        let text = #"0123456789"abc'def"#
        #expect(scanning(text) { JSONScan.nextEscape($0, from: 0, count: $1) } == 10)
        #expect(scanning(text) { JSONScan.nextEscape($0, from: 0, count: $1, quote: 0x27) } == 14)
        #expect(scanning("0123456789abcdef\u{1F}") { JSONScan.nextEscape($0, from: 0, count: $1, quote: 0x27) } == 16)
        #expect(scanning("élan vital, naïve") { JSONScan.nextEscape($0, from: 0, count: $1) } == "élan vital, naïve".utf8.count)
    }

    /// Every byte value at every place of texts longer and shorter than the
    /// sixteen bytes read at once, from several starts, with either quote and
    /// with or without stopping at bytes beyond ASCII: the first byte the
    /// search is for, by the byte-by-byte definition, and none past `count`.
    @Test func theEscapeSearchFindsEveryByteAtEveryPlace() {
        var mismatches: [String] = []
        for quote: UInt8 in [0x22, 0x27] {
            for nonASCII in [false, true] {
                let sought: (UInt8) -> Bool = { $0 < 0x20 || $0 == quote || $0 == 0x5C || (nonASCII && $0 >= 0x80) }
                for length in [1, 7, 15, 16, 17, 31, 32, 33, 40] {
                    for place in 0..<length {
                        for byte in 0...255 {
                            // Plain text around the byte, and a quote just past `count` that must not be seen.
                            var text = [UInt8](repeating: 0x61, count: length + 16)
                            text[place] = UInt8(byte)
                            text[length] = quote
                            for start in Set([0, 1, place, min(place + 1, length)]) {
                                let found = text.withUnsafeBufferPointer {
                                    JSONScan.nextEscape($0.baseAddress!, from: start, count: length, quote: quote, nonASCII: nonASCII)
                                }
                                let wanted = text[start..<length].firstIndex(where: sought) ?? length
                                if found != wanted {
                                    mismatches.append("quote \(quote) nonASCII \(nonASCII) length \(length) byte \(byte) at \(place) "
                                        + "from \(start): \(found), not \(wanted)")
                                }
                            }
                        }
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    /// Every byte value at every place of runs of digits longer and shorter
    /// than the sixteen bytes read at once: the first that is not a digit,
    /// by the byte-by-byte definition, and none past `count`.
    @Test func theDigitsEndAtTheFirstOtherByte() {
        var mismatches: [String] = []
        for length in [1, 7, 8, 15, 16, 17, 19, 31, 32, 33, 40] {
            for place in 0..<length {
                for byte in 0...255 {
                    // Digits around the byte, and a digit past `count` that must not be counted.
                    var text = [UInt8](repeating: 0x37, count: length + 16)
                    text[place] = UInt8(byte)
                    for start in Set([0, 1, place, min(place + 1, length)]) {
                        let found = text.withUnsafeBufferPointer { JSONScan.digitsEnd($0.baseAddress!, from: start, count: length) }
                        let wanted = text[start..<length].firstIndex { !(0x30...0x39).contains($0) } ?? length
                        if found != wanted { mismatches.append("length \(length) byte \(byte) at \(place) from \(start): \(found), not \(wanted)") }
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }

    @Test func aValueEndsWhereTheGrammarSays() {
        // (text, start, end)
        let table: [(String, Int, Int)] = [
            (#""s\"t" ,"#, 0, 6),
            (#"{"a":[1,"]}"],"b":{}} x"#, 0, 21),
            (#"[1, {'k': '}]'}] x"#, 0, 16),
            ("'single' x", 0, 8),
            ("true,false", 0, 4),
            ("-12.5e3}", 0, 7),
            ("null ]", 0, 4),
            ("x:1", 2, 3),
            (#"{"open": [1, 2"#, 0, 14),
            ("", 0, 0),
        ]
        for (text, start, end) in table {
            let bytes = Array(text.utf8) + [0]
            let found = bytes.withUnsafeBufferPointer { JSONScan.valueEnd($0.baseAddress!, from: start, count: bytes.count - 1) }
            #expect(found == end, "\(text)")
        }
    }

    @Test func spaceIsSkippedUpToTheNextToken() {
        #expect(scanning(" \t\r\n x") { JSONScan.skipSpace($0, from: 0, count: $1) } == 5)
        #expect(scanning("x ") { JSONScan.skipSpace($0, from: 0, count: $1) } == 0)
        #expect(scanning("x  ") { JSONScan.skipSpace($0, from: 1, count: $1) } == 3)
        // A form feed is not JSON's whitespace.
        #expect(scanning("\u{0C}x") { JSONScan.skipSpace($0, from: 0, count: $1) } == 0)
    }
}
