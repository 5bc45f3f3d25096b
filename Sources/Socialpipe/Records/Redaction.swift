import CJansson
import Glibc

/// Secret values in echoed input are replaced (contract §2).
public enum Redaction {
    /// The replacement text.
    public static let placeholder = "[redacted]"

    /// Keys ending in `_token` that name a position, not a credential.
    static let notCredentials: Set<String> = ["pagination_token", "next_token", "previous_token"]

    /// Whether a member named `key` holds a secret; names are compared
    /// without regard to ASCII case (`Consumer_Secret` is a secret too).
    public static func isSecret(_ key: String) -> Bool {
        var key = key
        return key.withUTF8 { isSecret(bytes: $0) }
    }

    /// `isSecret` on the UTF-8 bytes of a key.
    static func isSecret(bytes key: UnsafeBufferPointer<UInt8>) -> Bool {
        func endsWith(_ suffix: StaticString) -> Bool {
            let count = suffix.utf8CodeUnitCount
            guard key.count >= count else { return false }
            for index in 0..<count where lowercased(key[key.count - count + index]) != suffix.utf8Start[index] { return false }
            return true
        }
        func equals(_ name: String) -> Bool {
            key.count == name.utf8.count && zip(key, name.utf8).allSatisfy { lowercased($0) == $1 }
        }
        if endsWith("_secret") || equals("password") { return true }
        guard endsWith("_token") else { return false }
        return !notCredentials.contains(where: equals)
    }

    @inline(__always)
    private static func lowercased(_ byte: UInt8) -> UInt8 { byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte }

    /// Walks jansson's structures directly: this runs for every record.
    static func containsSecret(_ raw: UnsafeMutablePointer<json_t>) -> Bool {
        switch raw.pointee.type {
        case JSON_OBJECT:
            var iterator = json_object_iter(raw)
            while let current = iterator {
                if let key = json_object_iter_key(current), isSecret(cKey: key) { return true }
                if let member = json_object_iter_value(current), containsSecret(member) { return true }
                iterator = json_object_iter_next(raw, current)
            }
            return false
        case JSON_ARRAY:
            for index in 0..<json_array_size(raw) {
                if let element = json_array_get(raw, index), containsSecret(element) { return true }
            }
            return false
        default:
            return false
        }
    }

    private static func isSecret(cKey key: UnsafePointer<CChar>) -> Bool {
        key.withMemoryRebound(to: UInt8.self, capacity: 1) { isSecret(bytes: UnsafeBufferPointer(start: $0, count: strlen(key))) }
    }

    private static func redactInPlace(_ value: JSON) {
        switch value.kind {
        case .object:
            for (key, member) in value.members {
                if isSecret(key) {
                    value.set(member: key, string: placeholder)
                } else {
                    redactInPlace(member)
                }
            }
        case .array:
            for element in value.elements { redactInPlace(element) }
        default:
            break
        }
    }

    /// `record` itself when it holds no secret, else a copy with every secret value replaced.
    public static func redacted(_ record: JSON) -> JSON {
        guard containsSecret(record.raw) else { return record }
        let copy = record.deepCopy()
        redactInPlace(copy)
        return copy
    }

    /// The start of a line that did not parse, for `raw`, with the value
    /// after every secret-bearing key replaced by `"[redacted]"`. The line may
    /// be broken anywhere or cut short, so this is a lexical scan, not a
    /// parse: a string that names a secret, followed by `:` (or, in a broken
    /// line, directly by a string), makes the next value (a string, however
    /// it ends, or any other token) a secret. A line written with single
    /// quotes (`{'access_token':'X'}`, as Python prints a dict) is read the
    /// same way: a `'` opens a string where a key or value could start
    /// (first, or after `{`, `[`, `,` or `:`) and is closed on the line,
    /// and holds no `"`; after a secret's key it opens the value; elsewhere
    /// it is an apostrophe (`it's`) and hides nothing that follows.
    public static func redactedRaw(_ line: [UInt8]) -> [UInt8] {
        line.withUnsafeBufferPointer { text in text.baseAddress.map { redactedRaw(line, base: $0) } ?? [] }
    }

    /// `redactedRaw` of `line`, whose bytes are at `base`.
    private static func redactedRaw(_ line: [UInt8], base: UnsafePointer<UInt8>) -> [UInt8] {
        let count = line.count
        var output: [UInt8] = []
        output.reserveCapacity(count)
        var index = 0
        var secretValueNext = false
        /// The index just past a string starting at `start` (its opening
        /// quote, `"` or `'`); `count` when unclosed.
        func stringEnd(_ start: Int) -> Int {
            JSONScan.stringEnd(base, from: start + 1, count: count, quote: line[start])
        }
        /// Whether the `'` at `start` opens a string: where a key or value
        /// could start, and closed before the line ends.
        func opensSingleQuotedString(_ start: Int) -> Bool {
            var before = start - 1
            while before >= 0 && JSONScan.isWhitespace(line[before]) { before -= 1 }
            guard before < 0 || [0x7B, 0x5B, 0x2C, 0x3A].contains(line[before]) else { return false }
            let end = stringEnd(start)
            // One holding a `"` is read as text with double quotes in it, so
            // that `'"access_token":"X"'` cannot hide its key inside quotes.
            return end > start + 1 && line[end - 1] == 0x27 && !line[(start + 1)..<(end - 1)].contains(0x22)
        }
        func redactValue() {
            output += "\"\(placeholder)\"".utf8
            secretValueNext = false
        }
        while index < count {
            let byte = line[index]
            if secretValueNext && !JSONScan.isWhitespace(byte) {
                if byte == 0x2C || byte == 0x7D || byte == 0x5D {
                    // No value where one was due: nothing to hide.
                    secretValueNext = false
                    continue
                }
                index = JSONScan.valueEnd(base, from: index, count: count)
                redactValue()
                continue
            }
            if byte == 0x22 || (byte == 0x27 && opensSingleQuotedString(index)) {
                let end = stringEnd(index)
                output += line[index..<end]
                let after = JSONScan.skipSpace(base, from: end, count: count)
                // A key is followed by `:`; in a broken line perhaps directly by its value.
                if after < count && [0x3A, 0x22, 0x27].contains(line[after]) && end > index + 1 && line[end - 1] == byte {
                    let name = decodedKey(line[(index + 1)..<(end - 1)])
                    if name.withUnsafeBufferPointer(isSecret(bytes:)) {
                        let valueStart = line[after] == 0x3A ? after + 1 : end
                        output += line[end..<valueStart]
                        index = valueStart
                        secretValueNext = true
                        continue
                    }
                }
                index = end
                continue
            }
            output.append(byte)
            index += 1
        }
        return output
    }

    /// A key's text with its JSON escapes undone where they stand for ASCII
    /// (`consumer\u005fsecret` names a secret too); other bytes are kept.
    private static func decodedKey(_ text: ArraySlice<UInt8>) -> [UInt8] {
        var name: [UInt8] = []
        var index = text.startIndex
        while index < text.endIndex {
            let byte = text[index]
            guard byte == 0x5C, index + 1 < text.endIndex else {
                name.append(byte)
                index += 1
                continue
            }
            let escaped = text[index + 1]
            if escaped == 0x75, index + 6 <= text.endIndex,
               let value = UInt32(String(decoding: text[(index + 2)..<(index + 6)], as: UTF8.self), radix: 16), value < 0x80 {
                name.append(UInt8(value))
                index += 6
            } else {
                name.append(escaped)
                index += 2
            }
        }
        return name
    }

    /// `url` with the values of secret query parameters replaced, for logs
    /// and dry runs: those whose names say secret, and `parameters` (a
    /// service's own, such as a proof made from a secret).
    public static func redactedURL(_ url: String, hiding parameters: Set<String> = []) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        let query = url[url.index(after: question)...]
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = String(pair[..<equals])
            let hidden = isSecret(name) || parameters.contains(name)
            return hidden ? name + "=" + placeholder : String(pair)
        }
        return String(url[...question]) + pairs.joined(separator: "&")
    }

    /// `text` with every one of `secrets` hidden where it stands as a whole
    /// value, in every form a request carries it: as it is, JSON-escaped (a
    /// JSON body), percent-encoded once (a query or form value) or twice (a
    /// form inside a form-encoded batch). An occurrence is replaced when
    /// neither character just outside it is a token character (a letter, a
    /// digit, `-._~`); an escape right before it (`%XX`, `%25XX`, a JSON
    /// escape such as `\n` or `\u00e9`, also percent-encoded) stands for a
    /// delimiter. So a one-letter secret `x` is hidden in `Bearer x`, `ID|x`,
    /// `token=x`, `"x"` and `token%253Dx%2522`, while `https://api.x.example`
    /// stays as it is, and so does `secondary` for the secret `sec`.
    public static func hiding(_ secrets: [String], in text: String) -> String {
        let bytes = Array(text.utf8)
        var hidden: [Range<Int>] = []
        for secret in secrets where !secret.isEmpty {
            for form in encodings(of: secret) {
                var from = 0
                while let found = occurrence(of: form, in: bytes, from: from) {
                    let end = found + form.count
                    if startsAlone(bytes, at: found) && (end == bytes.count || !PercentEncoding.isUnreserved(bytes[end])) {
                        hidden.append(found..<end)
                    }
                    from = found + 1
                }
            }
        }
        guard !hidden.isEmpty else { return text }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var copied = 0
        for range in hidden.sorted(by: { $0.lowerBound < $1.lowerBound }) where range.upperBound > copied {
            if range.lowerBound >= copied {
                output += bytes[copied..<range.lowerBound]
                output += placeholder.utf8
            }
            copied = range.upperBound
        }
        output += bytes[copied...]
        return String(decoding: output, as: UTF8.self)
    }

    /// The forms `secret` takes in a request: as it is, JSON-escaped (by
    /// jansson, which writes `\u001F`, and by the core's writer, `\u001f`),
    /// and percent-encoded once and twice.
    static func encodings(of secret: String) -> [[UInt8]] {
        let raw = Array(secret.utf8)
        let jansson = Array(JSON.string(secret).dumped().utf8.dropFirst().dropLast())
        let written = ByteBuffer()
        written.appendJSONString(secret)
        let core = Array(written.bytes.dropFirst().dropLast())
        func percentEncoded(_ bytes: [UInt8]) -> [UInt8] {
            let output = ByteBuffer()
            bytes.withUnsafeBufferPointer { PercentEncoding.encode($0, into: output) }
            return output.array
        }
        let once = percentEncoded(raw)
        var forms: [[UInt8]] = []
        for form in [raw, jansson, core, once, percentEncoded(once), percentEncoded(jansson)] where !form.isEmpty && !forms.contains(form) {
            forms.append(form)
        }
        return forms
    }

    /// The index of the first occurrence of `needle` in `haystack` at or after `from`.
    private static func occurrence(of needle: [UInt8], in haystack: [UInt8], from: Int) -> Int? {
        guard let first = needle.first, haystack.count >= needle.count else { return nil }
        var index = from
        while index <= haystack.count - needle.count {
            if haystack[index] == first && haystack[index..<(index + needle.count)].elementsEqual(needle) { return index }
            index += 1
        }
        return nil
    }

    /// Whether what starts at `start` is not the tail of a longer token: it
    /// starts the text, follows a character that is not a token character,
    /// or follows an escape, which stands for one.
    private static func startsAlone(_ bytes: [UInt8], at start: Int) -> Bool {
        guard start > 0, PercentEncoding.isUnreserved(bytes[start - 1]) else { return true }
        func isHex(_ index: Int) -> Bool { PercentEncoding.hexValue(bytes[index]) != nil }
        func holds(_ literal: String, endingAt end: Int) -> Bool {
            end >= literal.utf8.count && bytes[(end - literal.utf8.count)..<end].elementsEqual(literal.utf8)
        }
        // A backslash, as it is or percent-encoded once or twice, ends at `end`.
        func backslash(endingAt end: Int) -> Bool {
            holds("\\", endingAt: end) || holds("%5C", endingAt: end) || holds("%255C", endingAt: end)
        }
        if start >= 3 && bytes[start - 3] == 0x25 && isHex(start - 2) && isHex(start - 1) { return true }
        if holds("%25", endingAt: start - 2) && isHex(start - 2) && isHex(start - 1) { return true }
        if "bfnrt".utf8.contains(bytes[start - 1]) && backslash(endingAt: start - 1) { return true }
        if start >= 5 && bytes[start - 5] == 0x75 && (start - 4..<start).allSatisfy(isHex) && backslash(endingAt: start - 5) {
            return true
        }
        return false
    }

    /// A `Name: value` header line with a secret value replaced. An OAuth 1.0a
    /// Authorization header holds no secret (its signature is not one) and is kept.
    public static func redactedHeader(_ line: String, secretNames: Set<String>) -> String {
        guard let colon = line.firstIndex(of: ":") else { return line }
        let name = line[..<colon].lowercased()
        guard secretNames.contains(name) else { return line }
        let value = line[line.index(after: colon)...].drop { $0 == " " }
        if value.hasPrefix("OAuth ") { return line }
        if let space = value.firstIndex(of: " ") {
            return line[...colon] + " " + value[..<space] + " " + placeholder
        }
        return line[...colon] + " " + placeholder
    }
}
