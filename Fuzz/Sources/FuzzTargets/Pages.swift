@testable import Socialpipe

/// Page reading (`RawJSON`): it accepts exactly the texts RFC 8259 accepts
/// that jq reads back (no lone surrogate, nesting up to
/// `JSONValidation.maximumDepth`); walking an accepted text never
/// crashes; every value it finds is itself a valid JSON text; and where
/// jansson reads the same text, members, elements and strings agree.
public enum Pages {
    /// Member names pages are read for, and a few more.
    static let probes: [StaticString] = ["data", "meta", "next_token", "result_count", "errors", "error", "id", "ids",
                                         "next_cursor_str", "code", "body", "message", "paging", "a", "b", ""]

    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        let bytes = Array(data)
        let page = RawJSON(bytes)
        let verdict = StrictJSON.check(bytes)
        let acceptable = verdict.map { $0.depth <= JSONValidation.maximumDepth && !$0.loneSurrogate } ?? false
        require((page != nil) == acceptable,
                "RawJSON \(page == nil ? "refuses" : "accepts") a text RFC 8259 \(verdict == nil ? "refuses" : "accepts") "
                + "(depth \(verdict?.depth ?? -1)): \(escaped(bytes))")
        guard let page else { return }
        var reference: JSON?
        if case .success(let value) = data.withMemoryRebound(to: UInt8.self, { JSON.parse($0) }) { reference = value }
        walk(page, page.root, reference.map(JSONView.init), budget: 10_000)
    }

    /// Checks the value at `range` and everything in it, against jansson's
    /// reading of it when there is one.
    static func walk(_ page: RawJSON, _ range: Range<Int>, _ reference: JSONView?, budget: Int) {
        guard budget > 0 else { return }
        require(range.lowerBound >= 0 && range.upperBound <= page.bytes.count && !range.isEmpty,
                "a value's range \(range) is outside the text of \(page.bytes.count) bytes")
        let text = Array(page.bytes[range])
        require(StrictJSON.check(text) != nil, "a value found in the page is not JSON text: \(escaped(text))")
        require(page.isString(range) == (text.first == 0x22), "isString is wrong for \(escaped(text))")
        if let string = page.string(range) {
            require(page.isString(range), "string() read a value that is no string: \(escaped(text))")
            if let expected = reference?.stringBytes {
                require(Array(string.utf8) == Array(expected), "string() reads \(escaped(text)) as \(escaped(Array(string.utf8)))")
            }
        } else if page.isString(range), reference != nil {
            require(false, "string() could not read a string jansson reads: \(escaped(text))")
        }
        let elements = page.elements(of: range)
        if text.first == UInt8(ascii: "[") {
            if let reference {
                require(elements.count == reference.arrayCount,
                        "\(elements.count) elements where jansson finds \(reference.arrayCount): \(escaped(text))")
            }
            for (index, element) in elements.enumerated() {
                require(range.contains(element.lowerBound) && element.upperBound <= range.upperBound,
                        "an element lies outside its array: \(escaped(text))")
                walk(page, element, reference?[index], budget: budget / max(1, elements.count) - 1)
            }
        } else {
            require(elements.isEmpty, "elements found in a value that is no array: \(escaped(text))")
        }
        for key in probes {
            let member = page.member(key, of: range)
            guard text.first == UInt8(ascii: "{") else {
                require(member == nil, "a member found in a value that is no object: \(escaped(text))")
                continue
            }
            let expected = reference.flatMap { object -> JSONView? in
                var found: JSONView?
                object.forEachMember { name, value in
                    if found == nil && Array(name) == Array(UnsafeBufferPointer(start: key.utf8Start, count: key.utf8CodeUnitCount)) {
                        found = value
                    }
                }
                return found
            }
            if reference != nil && (member == nil) != (expected == nil) {
                let what = "member \"\(key)\" is \(member == nil ? "missing" : "found") where jansson \(expected == nil ? "finds none" : "finds one")"
                require(false, what + ": " + escaped(text))
            }
            if let member {
                require(range.contains(member.lowerBound) && member.upperBound <= range.upperBound,
                        "member \"\(key)\" lies outside its object: \(escaped(text))")
                walk(page, member, expected, budget: budget / 2 - 1)
            }
        }
    }
}
