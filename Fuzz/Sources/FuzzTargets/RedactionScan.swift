@testable import Socialpipe

/// `Redaction.redactedRaw`, the scan of a line that did not parse (contract
/// §2, `raw`): a line is built around one secret-bearing key, its value
/// made of `Z`s (a byte nothing else in the line holds), in any shape and
/// cut anywhere, behind any bytes that open no string; no `Z` may survive,
/// the bytes before the key come out unchanged, and the result repaired as
/// `raw` is is valid UTF-8.
///
/// Input: four choice bytes (key, separator, value shape, length and cut),
/// then the bytes before the key, a NUL, and the bytes after the value.
public enum RedactionScan {
    /// Secret-bearing keys as a line may write them.
    static let keys = [
        #""access_token""#, #""Consumer_Secret""#, #""password""#, #""TOKEN_SECRET""#, #""app_secret""#,
        #""consumer\u005fsecret""#, #""\u0070assword""#, #""bearer_token""#, #""x_token""#, #""PASSWORD""#,
        #""access\u005Ftoken""#, #""a_\u0053ECRET""#,
    ]
    /// What stands between the key and its value.
    static let separators = [":", " : ", "\t:\t", ":\n", ""]

    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        var input = FuzzInput(data)
        let key = Array(keys[Int(input.byte()) % keys.count].utf8)
        let separatorChoice = Int(input.byte()) % separators.count
        let shape = input.byte()
        let lengthAndCut = input.byte()
        let rest = input.rest()
        let split = rest.firstIndex(of: 0) ?? rest.endIndex
        // Before the key: no quote of either kind or backslash (no string is
        // open when the key comes, and no key of its own), and no Z.
        let before = rest[..<split].filter { $0 != 0x22 && $0 != 0x27 && $0 != 0x5C && $0 != 0x5A }
        // After the value: no Z, and no `\u` that could spell one.
        var after = rest[min(split + 1, rest.endIndex)...].map { $0 == 0x5A ? 0x59 : $0 }
        for index in after.indices.dropFirst() where after[index] == 0x75 && after[index - 1] == 0x5C { after[index] = 0x55 }

        let secret = [UInt8](repeating: 0x5A, count: 1 + Int(lengthAndCut & 0x1F))
        let value: [UInt8]
        var separator = separators[separatorChoice]
        switch shape % 6 {
        case 0: value = [0x22] + secret + [0x22]
        case 1: value = [0x22] + secret + Array(#"\"\\}]"#.utf8) + secret + [0x22]
        case 2: value = secret  // a bare token: a number, a literal, or any run up to a delimiter
        case 3: value = Array(#"{"a":""#.utf8) + secret + Array(#"","b":[1,{"c":"}"#.utf8) + secret + Array(#""}]}"#.utf8)
        case 4: value = Array(#"[""#.utf8) + secret + Array(#"",["]"#.utf8) + secret + Array(#""]]"#.utf8)
        default: value = [0x22] + secret + Array(#"\u005a"#.utf8)
        }
        // Only a string may follow a key directly, without its colon.
        if separator.isEmpty && value.first != 0x22 { separator = ":" }
        var line = before + key + Array(separator.utf8) + value + after
        // `raw` holds the first 256 bytes of the line: the value may be cut anywhere.
        if lengthAndCut & 0x80 != 0 {
            let valueStart = before.count + key.count + separator.utf8.count
            let cut = valueStart + Int(shape >> 3) % (value.count + 1)
            line = Array(line.prefix(cut))
        }

        let output = Redaction.redactedRaw(line)
        if let leak = output.firstIndex(of: 0x5A) {
            require(false, "a secret survived redaction at byte \(leak): \(escaped(line)) became \(escaped(output))")
        }
        // `\u005a` is a Z too, escaped.
        require(output.firstRange(of: Array(#"\u005a"#.utf8)) == nil, "an escaped secret survived: \(escaped(output))")
        require(output.starts(with: before), "the bytes before the key changed: \(escaped(line)) became \(escaped(output))")
        let raw = UTF8Validation.repaired(output)
        let rawBytes = Array(raw.utf8)
        require(rawBytes.withUnsafeBufferPointer(UTF8Validation.firstInvalidOffset) == nil,
                "raw is not valid UTF-8 after repair: \(escaped(output))")

        // Any line at all: the scan never crashes, and a line holding no
        // secret-bearing key at all comes out unchanged.
        let anyLine = Array(data)
        let scanned = Redaction.redactedRaw(anyLine)
        if !mentionsSecretKey(anyLine) {
            require(scanned == anyLine, "a line with no secret-bearing key changed: \(escaped(anyLine)) became \(escaped(scanned))")
        }
    }

    /// Whether `line` could hold a secret-bearing key: `_secret`, `_token`
    /// or `password` in any case, or any escape that could spell one.
    static func mentionsSecretKey(_ line: [UInt8]) -> Bool {
        let lowered = line.map { $0 >= 0x41 && $0 <= 0x5A ? $0 | 0x20 : $0 }
        return lowered.contains(0x5C) || ["_secret", "_token", "password"].contains { lowered.firstRange(of: Array($0.utf8)) != nil }
    }
}
