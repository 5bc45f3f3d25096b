@testable import Socialpipe
import Glibc

/// Bytes in, envelopes out, through the loop every tool runs (`EventLoop`
/// over `RecordInput`, `LineReader` and `JSON.parse`), with a tool that
/// echoes each record (after the field checks tools make). Every envelope
/// is one valid JSON line; there is one per line that is not blank, in
/// order, with its line number; a record's `input` is the value its line
/// holds (secret values redacted, nothing else changed); a line that is not
/// a record has `input: null`, a `raw` string and an `input` error.
///
/// Input: a byte of flags (bit 0 `-R`, bit 1 a tool without a primary
/// field, bit 2 `--unordered`), a byte choosing `--max-line`, then stdin.
public enum Records {
    nonisolated(unsafe) static let inputFile = ScratchFile()
    nonisolated(unsafe) static let outputFile = ScratchFile()

    /// Ends each record at once, as a tool that sends nothing would.
    final class Echo: RecordTool {
        func start(_ record: Record, reply: Reply) -> Job? {
            do throws(RecordError) {
                try record.refuseUnknownKeys(["text", "profile", "max_length", "media"])
                _ = try record.string("text")
                _ = try record.integer("max_length", in: 1...100_000)
                reply.complete(.success(JSON.object()))
            } catch {
                reply.complete(.failure(error))
            }
            return nil
        }
    }

    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        var input = FuzzInput(data)
        let flags = input.byte()
        let limitChoice = Int(input.byte())
        let maxLine = limitChoice == 0 ? 1 << 20 : limitChoice * 64
        let text = Array(input.rest().prefix(1 << 16))
        let primaryField: String? = flags & 2 == 0 ? "text" : nil
        let rawInput = flags & 1 != 0 && primaryField != nil

        let tool = ToolDescription(name: "fuzz-records", usage: "", summary: "", epilogue: "", primaryField: primaryField)
        let options = [CommonOptions.maxLine, CommonOptions.rawInput, CommonOptions.unordered, CommonOptions.noProgress]
        var arguments = ["--no-progress", "--max-line", String(maxLine)]
        if rawInput { arguments.append("-R") }
        if flags & 4 != 0 { arguments.append("--unordered") }
        guard case .run(let parsed)? = try? ArgumentParser(tool: tool, options: options).parse(arguments) else {
            require(false, "the fuzz target's own arguments were refused: \(arguments)")
            return
        }

        inputFile.replace(with: text)
        outputFile.clear()
        let loop: EventLoop
        do {
            loop = try EventLoop(tool: tool, arguments: parsed, source: .lines(fd: inputFile.descriptor),
                                 outputFD: outputFile.descriptor, watchesSignals: false)
        } catch {
            require(false, "the loop did not start: \(error)")
            return
        }
        let status = loop.run(Echo())
        require(status == .success || status == .recordFailed, "the run ended with status \(status.rawValue)")

        let output = outputFile.contents()
        require(output.isEmpty || output.last == 0x0A, "the output does not end with a newline")
        let envelopes = output.split(separator: 0x0A, omittingEmptySubsequences: false).dropLast()
        let lines = Lines.split(text, maxLine: maxLine)
        require(envelopes.count == lines.count, "\(envelopes.count) envelopes for \(lines.count) lines that are not blank")
        for (envelope, line) in zip(envelopes, lines) {
            check(Array(envelope), for: line, rawInput: rawInput, primaryField: primaryField)
        }
    }

    static func check(_ envelope: [UInt8], for line: Lines.Line, rawInput: Bool, primaryField: String?) {
        let number: Int
        var lineText: [UInt8]?
        switch line {
        case .text(let index, let bytes):
            number = index
            lineText = bytes
        case .tooLong(let index, _, _):
            number = index
        }
        // Read before the envelope is parsed: one echoing a line that is
        // not JSON may not parse at all.
        let echoesRecord = envelope.starts(with: Array(#"{"ok":true"#.utf8)) || !envelope.contains(Array(#","input":null,"raw":"#.utf8))
        if let lineText, echoesRecord, !rawInput {
            // A line that is not strictly one JSON value, or that jq would
            // refuse, is not to become a record (issue 17 §2).
            guard let verdict = StrictJSON.check(lineText) else {
                require(false, "a line that is not one RFC 8259 value became a record, echoed as \(escaped(envelope))")
                return
            }
            require(verdict.depth <= JSONValidation.maximumDepth,
                    "a record nested \(verdict.depth) deep was accepted, echoed as \(escaped(envelope))")
            require(!verdict.loneSurrogate, "a record with a lone surrogate was accepted, echoed as \(escaped(envelope))")
        }
        guard let verdict = StrictJSON.check(envelope), !verdict.loneSurrogate else {
            require(false, "envelope of line \(number) is not JSON jq reads: \(escaped(envelope))")
            return
        }
        guard case .success(let value) = envelope.withUnsafeBufferPointer({ JSON.parse($0) }) else {
            require(false, "envelope of line \(number) is valid JSON that jansson refuses: \(escaped(envelope))")
            return
        }
        require(value.kind == .object && value["line"]?.integer == Int64(number),
                "envelope of line \(number) says line \(value["line"]?.dumped() ?? "nothing"): \(escaped(envelope))")
        guard let echoed = value["input"] else {
            require(false, "envelope of line \(number) has no input: \(escaped(envelope))")
            return
        }
        if echoed.isNull {
            require(value["ok"]?.bool == false && value["error"]?["kind"]?.string == "input" && value["raw"]?.kind == .string,
                    "an unusable line's envelope is not an input error with raw: \(escaped(envelope))")
            if rawInput && primaryField != nil, let lineText {
                require(lineText.withUnsafeBufferPointer(UTF8Validation.firstInvalidOffset) != nil,
                        "with -R, a line of valid UTF-8 was refused: \(escaped(envelope))")
            }
            return
        }
        require(echoed.kind == .object, "a record's input is not an object: \(escaped(envelope))")
        guard let lineText else {
            require(false, "a line over --max-line became a record: \(escaped(envelope))")
            return
        }
        checkEcho(echoed, of: lineText, rawInput: rawInput, primaryField: primaryField, envelope: envelope)
    }

    /// The echoed record holds what the line holds, with every secret value
    /// (and nothing else) replaced by "[redacted]".
    static func checkEcho(_ echoed: JSON, of line: [UInt8], rawInput: Bool, primaryField: String?, envelope: [UInt8]) {
        let expected: JSON
        if rawInput, let primaryField {
            expected = JSON.object()
            expected.set(member: primaryField, string: String(decoding: line, as: UTF8.self))
        } else {
            guard case .success(let parsed) = line.withUnsafeBufferPointer({ JSON.parse($0) }) else {
                require(false, "a line jansson refuses became a record: \(escaped(line))")
                return
            }
            if parsed.kind == .string, let primaryField {
                expected = JSON.object()
                expected.set(member: primaryField, parsed)
            } else {
                expected = parsed
            }
        }
        require(sameWithSecretsRedacted(JSONView(expected), JSONView(echoed)),
                "the echo \(escaped(envelope)) is not the record \(escaped(line)) with its secrets redacted")
    }

    /// Whether `echo` is `value` with each secret-bearing member's value (at
    /// any depth) replaced by "[redacted]". Keys are compared whole, NULs
    /// included, and judged secret on the whole key as contract §2 says.
    static func sameWithSecretsRedacted(_ value: JSONView, _ echo: JSONView) -> Bool {
        func members(_ view: JSONView) -> [([UInt8], JSONView)] {
            var found: [([UInt8], JSONView)] = []
            view.forEachMember { key, member in found.append((Array(key), member)) }
            return found
        }
        switch value.kind {
        case .object:
            let expected = members(value)
            let echoed = members(echo)
            guard echo.kind == .object, expected.count == echoed.count else { return false }
            for ((key, member), (echoKey, echoMember)) in zip(expected, echoed) {
                guard key == echoKey else { return false }
                if key.withUnsafeBufferPointer(Redaction.isSecret(bytes:)) {
                    guard let text = echoMember.stringBytes, Array(text) == Array(Redaction.placeholder.utf8) else { return false }
                } else if !sameWithSecretsRedacted(member, echoMember) {
                    return false
                }
            }
            return true
        case .array:
            guard echo.kind == .array, value.arrayCount == echo.arrayCount else { return false }
            return (0..<value.arrayCount).allSatisfy { index in
                guard let element = value[index], let echoed = echo[index] else { return false }
                return sameWithSecretsRedacted(element, echoed)
            }
        default:
            return Array(JSON(borrowing: value.raw).dumped().utf8) == Array(JSON(borrowing: echo.raw).dumped().utf8)
        }
    }
}
