@testable import Socialpipe

/// Records read in place (`RecordTextReader`, oauth-sign's reading) against
/// jansson's reading, which every other tool uses: a line the reader takes
/// is one jansson reads as an object, its echo is byte for byte what the
/// core writes of jansson's value with its secrets redacted, and every
/// member reads as jansson's does; a line it leaves to jansson, written
/// out by the core, reads as jansson's value too.
///
/// Input: a line (past the loop's checks: UTF-8, `JSONValidation`).
public enum RecordTexts {
    nonisolated(unsafe) static let reader = RecordTextReader()

    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        guard UTF8Validation.firstInvalidOffset(data) == nil, case .success = JSONValidation.check(data, knownUTF8: true) else {
            return
        }
        var parsed: JSON?
        if case .success(let value) = JSON.parse(data), value.kind == .object { parsed = value }
        let echo = ByteBuffer()
        guard let text = reader.read(data, line: 1, echo: echo) else {
            guard let parsed else { return }
            let written = ByteBuffer()
            written.appendJSON(parsed)
            guard let again = reader.read(written.bytes, line: 1, exact: false) else {
                require(false, "the core's writing of a record is not read: \(escaped(written.bytes))")
                return
            }
            compare(again, parsed, data)
            return
        }
        guard let parsed else {
            require(false, "a line jansson does not read as an object is read in place: \(escaped(data))")
            return
        }
        let expected = ByteBuffer()
        expected.appendJSON(Redaction.redacted(parsed))
        require(RawBytes.equal(echo.bytes, expected.bytes),
                "the echo \(escaped(echo.bytes)) is not \(escaped(expected.bytes)) of \(escaped(data))")
        compare(text, parsed, data)
    }

    /// The record's members against jansson's, in order.
    static func compare(_ text: RecordText, _ parsed: JSON, _ line: UnsafeBufferPointer<UInt8>) {
        var members: [([UInt8], TextValue)] = []
        text.forEachMember { name, value in members.append((Array(name), value)) }
        var index = 0
        JSONView(parsed).forEachMember { name, value in
            require(index < members.count, "jansson finds more members in \(escaped(line))")
            require(members[index].0 == Array(name),
                    "member \(index) is named \(escaped(members[index].0)), not \(escaped(name)), in \(escaped(line))")
            same(members[index].1, value, line, budget: 2_000)
            index += 1
        }
        require(index == members.count, "jansson finds fewer members in \(escaped(line))")
    }

    /// A value read in place against jansson's reading of it.
    static func same(_ value: TextValue, _ reference: JSONView, _ line: UnsafeBufferPointer<UInt8>, budget: Int) {
        guard budget > 0 else { return }
        require(value.kind == reference.kind, "a \(reference.kind) reads as a \(value.kind) in \(escaped(line))")
        require(value.isNull == reference.isNull && value.bool == reference.bool && value.integer == reference.integer,
                "a \(reference.kind) reads otherwise in \(escaped(line))")
        if let expected = reference.stringBytes {
            let bytes = value.stringBytes.map(Array.init) ?? []
            require(bytes == Array(expected), "a string reads as \(escaped(bytes)), not \(escaped(expected)), in \(escaped(line))")
        } else {
            require(value.stringBytes == nil, "a \(reference.kind) reads as a string in \(escaped(line))")
        }
        let elements = value.elements
        require(elements.count == reference.arrayCount, "an array of \(reference.arrayCount) has \(elements.count) in \(escaped(line))")
        for (index, element) in elements.enumerated() {
            if let expected = reference[index] { same(element, expected, line, budget: budget / max(1, elements.count) - 1) }
        }
        var members: [([UInt8], TextValue)] = []
        value.forEachMember { name, member in members.append((Array(name), member)) }
        var index = 0
        reference.forEachMember { name, member in
            guard index < members.count else { return }
            require(members[index].0 == Array(name), "a nested member is named otherwise in \(escaped(line))")
            same(members[index].1, member, line, budget: budget / 2 - 1)
            index += 1
        }
        require(index == members.count, "a nested object has \(members.count) members, not \(index), in \(escaped(line))")
    }
}
