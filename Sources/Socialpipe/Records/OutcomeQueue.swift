import Glibc

/// How a run writes outcomes: the contract's envelopes, or lines a tool
/// formats itself (oauth-sign's header and curl formats), failures then
/// going to stderr as `TOOL: line N: kind: message`; or, for a tool that
/// reads no lines (its records come from the command), as `TOOL: kind: message`.
public enum OutputStyle: Sendable {
    case envelopes
    case toolLines
    case commandLines
}

/// Puts outcomes on stdout in input order (or as they come with
/// `--unordered`): a record's lines wait until every earlier record is done.
/// An outcome is serialised once, when it is known: straight into the
/// output when its record is at the head, else into its record's slot,
/// without the record's echo, which the slot holds once for all its lines.
final class OutcomeQueue {
    final class Slot {
        /// How each of the record's envelopes begins.
        let start: EnvelopeStart
        /// What waits to be written, in order.
        var pending: [Pending] = []
        var done = false
        /// Lines held here until the record reaches the head.
        var bufferedLines = 0
        /// Bytes held for the record until it is written out: its echo and its pending lines.
        var bufferedBytes = 0
        /// Whether the record has failed (its first failure is the one counted).
        var failed = false
        /// Whether the record is at the head of an ordered output: its lines
        /// go straight out (a flag, so that each line need not look it up).
        var atHead = false

        init(start: EnvelopeStart) { self.start = start }
    }

    enum Pending {
        /// A line as it goes out (the tool's own format), with its newline.
        case line([UInt8])
        /// An envelope after its start, which the slot's echo supplies when it goes out.
        case envelope(ok: Bool, rest: [UInt8])
        case diagnostic(String)
    }

    /// Bytes held for the records not yet written out (their echoes and the
    /// lines waiting behind the head) beyond which no job behind the head
    /// fetches more and no more records are read. The head's own record never
    /// waits, so the run always goes on.
    static let byteWindow = 64 << 20

    let style: OutputStyle
    private let ordered: Bool
    let output: OutputWriter
    private var slots: [Slot] = []
    private var head = 0

    /// Whether any outcome makes the run exit 1.
    private(set) var anyFailed = false
    /// Records opened and not yet written out (finished, in unordered mode).
    private(set) var unfinished = 0
    /// Lines held in slots behind the head, for the read-ahead bound.
    private(set) var bufferedLines = 0
    /// Bytes held for the records not yet written out, for the read-ahead bound.
    private(set) var bufferedBytes = 0
    /// Records opened, for the summary at exit.
    private(set) var records = 0
    /// Records that failed, by the kind of their first failure.
    private(set) var failuresByKind: [RecordError.Kind: Int] = [:]
    /// Whether every envelope ends with its `cost` (`--cost`).
    var showsCost = false
    /// What the records were charged, all told.
    fileprivate(set) var charged = Money.zero

    init(ordered: Bool, style: OutputStyle, output: OutputWriter) {
        self.ordered = ordered
        self.style = style
        self.output = output
    }

    func open(_ start: EnvelopeStart) -> Slot {
        let slot = Slot(start: start)
        records += 1
        unfinished += 1
        hold(start.size, in: slot)
        if ordered {
            slot.atHead = slots.count == head
            slots.append(slot)
        }
        return slot
    }

    private func hold(_ bytes: Int, in slot: Slot) {
        slot.bufferedBytes += bytes
        bufferedBytes += bytes
    }

    /// Whether `slot` may write straight to the output.
    func isHead(_ slot: Slot) -> Bool {
        !ordered || slot.atHead
    }

    /// Writes one envelope: its start from the slot's echo, then what `body` serialises.
    func writeEnvelope(in slot: Slot, ok: Bool, failed: Bool, _ body: (ByteBuffer) -> Void) {
        write(in: slot, failed: failed, start: { slot.start.write(ok: ok, to: output) },
              held: { .envelope(ok: ok, rest: $0) }, body)
    }

    /// Writes one line, serialised by `body` into the output or into the slot.
    func writeLine(in slot: Slot, failed: Bool, _ body: (ByteBuffer) -> Void) {
        write(in: slot, failed: failed, start: {}, held: Pending.line, body)
    }

    /// Straight into the output after `start` at the head; else serialised
    /// into the slot as `held` makes it (with its newline).
    private func write(in slot: Slot, failed: Bool, start: () -> Void, held: ([UInt8]) -> Pending,
                       _ body: (ByteBuffer) -> Void) {
        if failed { anyFailed = true }
        if isHead(slot) {
            start()
            body(output.buffer)
            output.endLine()
            return
        }
        let line = ByteBuffer(capacity: 256)
        body(line)
        line.append(0x0A)
        slot.pending.append(held(line.array))
        holdLine(of: line.count, in: slot)
    }

    private func holdLine(of bytes: Int, in slot: Slot) {
        slot.bufferedLines += 1
        bufferedLines += 1
        hold(bytes, in: slot)
    }

    /// Counts a failure of the record of `slot`, once per record.
    func countFailure(in slot: Slot, _ kind: RecordError.Kind) {
        guard !slot.failed else { return }
        slot.failed = true
        failuresByKind[kind, default: 0] += 1
    }

    /// `3 of 6 failed (duplicate 2, auth 1)`: kinds by count, largest
    /// first, ties by name; nil when no record failed.
    var failureSummary: String? {
        guard !failuresByKind.isEmpty else { return nil }
        let kinds = failuresByKind.map { (name: $0.key.rawValue, count: $0.value) }
            .sorted { $0.count != $1.count ? $0.count > $1.count : $0.name < $1.name }
        let failed = kinds.reduce(0) { $0 + $1.count }
        return "\(failed) of \(records) failed (" + kinds.map { "\($0.name) \($0.count)" }.joined(separator: ", ") + ")"
    }

    /// A message for stderr, written when the record's turn comes.
    func writeDiagnostic(in slot: Slot, _ message: String) {
        anyFailed = true
        if isHead(slot) {
            output.flush()
            Diagnostics.say(message)
        } else {
            slot.pending.append(.diagnostic(message))
            hold(message.utf8.count, in: slot)
        }
    }

    func finish(_ slot: Slot) {
        slot.done = true
        guard ordered else {
            unfinished -= 1
            forget(slot)
            return
        }
        while head < slots.count && slots[head].done {
            forget(slots[head])
            slots[head].atHead = false
            head += 1
            unfinished -= 1
            if head < slots.count {
                slots[head].atHead = true
                release(slots[head])
            }
        }
        if head > 1024 && head * 2 > slots.count {
            slots.removeFirst(head)
            head = 0
        }
    }

    /// Writes what `slot` held, now that it is at the head.
    private func release(_ slot: Slot) {
        for item in slot.pending {
            switch item {
            case .line(let bytes):
                bytes.withUnsafeBufferPointer { output.buffer.append($0) }
                output.endLine(appended: false)
            case .envelope(let ok, let rest):
                slot.start.write(ok: ok, to: output)
                rest.withUnsafeBufferPointer { output.buffer.append($0) }
                output.endLine(appended: false)
            case .diagnostic(let message):
                output.flush()
                Diagnostics.say(message)
            }
        }
        bufferedLines -= slot.bufferedLines
        slot.bufferedLines = 0
        slot.pending.removeAll()
        let written = slot.bufferedBytes - slot.start.size
        slot.bufferedBytes -= written
        bufferedBytes -= written
    }

    /// Stops counting what `slot` held: its record is written out.
    private func forget(_ slot: Slot) {
        bufferedBytes -= slot.bufferedBytes
        slot.bufferedBytes = 0
    }
}

/// How every envelope of a record begins, `{"ok":…,"line":N,"input":…`,
/// with the record's echo serialised once: held once per record, not once
/// per line waiting, and written out as it is.
final class EnvelopeStart {
    let line: Int
    /// `input`: the record's own line without its whitespace when it holds no
    /// secret, else the record with its secrets redacted, or `null`. Never
    /// nil, so that each envelope copies it without taking a reference to it.
    private let echo: ByteBuffer

    init(line: Int, input: JSON?, text: UnsafeBufferPointer<UInt8>?) {
        self.line = line
        guard let input else {
            echo = Self.null
            return
        }
        if let text, !Redaction.containsSecret(input.raw) {
            let minified = ByteBuffer(capacity: text.count)
            minified.appendMinified(text)
            echo = minified
        } else {
            let serialised = ByteBuffer(capacity: 256)
            serialised.appendJSON(Redaction.redacted(input))
            echo = serialised
        }
    }

    /// `echo` made already (`RecordTextReader`).
    init(line: Int, echo: ByteBuffer?) {
        self.line = line
        self.echo = echo ?? Self.null
    }

    /// The echo of no record, shared.
    private nonisolated(unsafe) static let null = {
        let null = ByteBuffer(capacity: 4)
        null.append("null")
        return null
    }()

    /// Bytes of the echo held (none for the shared `null`).
    var size: Int { echo === Self.null ? 0 : echo.count }

    func write(ok: Bool, to output: OutputWriter) {
        let buffer = output.buffer
        buffer.append(ok ? "{\"ok\":true,\"line\":" : "{\"ok\":false,\"line\":")
        buffer.appendDecimal(Int64(line))
        buffer.append(",\"input\":")
        output.append(echo.bytes)
    }
}

/// A record's way to the output: results and errors, then `finish()`.
public final class Reply {
    private let queue: OutcomeQueue
    private let slot: OutcomeQueue.Slot
    /// The record's line (or argument index).
    public var line: Int { slot.start.line }
    /// The start of a line that is not a record, for `raw`.
    private let raw: String?
    /// Whether `finish()` was called.
    public private(set) var isFinished = false
    /// Charged and not yet written in an envelope.
    private var owed = Money.zero

    init(queue: OutcomeQueue, line: Int, input: JSON?, text: UnsafeBufferPointer<UInt8>? = nil, raw: String? = nil) {
        self.queue = queue
        // Lines in the tool's own format carry no echo.
        let echoed = queue.style == .envelopes ? input : nil
        slot = queue.open(EnvelopeStart(line: line, input: echoed, text: text))
        self.raw = raw
    }

    /// The reply of a record read in place, whose echo is made already.
    init(queue: OutcomeQueue, line: Int, echo: ByteBuffer?) {
        self.queue = queue
        slot = queue.open(EnvelopeStart(line: line, echo: echo))
        raw = nil
    }

    /// Lines this record holds behind the head of an ordered output.
    public var bufferedLines: Int { slot.bufferedLines }
    /// Bytes held for every record not yet written out (echoes, and lines
    /// waiting behind the head of an ordered output).
    public var bufferedBytesOfAllRecords: Int { queue.bufferedBytes }
    /// Whether this record's lines go straight out.
    public var isAtHead: Bool { queue.isHead(slot) }
    /// Whether the reader of the output has gone: the run is ending.
    public var outputIsClosed: Bool { queue.output.isClosed }

    /// One successful outcome; `failsRun` makes the run exit 1 all the same
    /// (a check whose answer is "no").
    public func succeed(_ result: JSON, failsRun: Bool = false) {
        guard !isFinished else { return }
        queue.writeEnvelope(in: slot, ok: true, failed: failsRun) { output in
            output.append(",\"result\":")
            output.appendJSON(result)
            appendCost(to: output)
            output.append(0x7D)
        }
    }

    /// One successful outcome whose result is JSON text: compact text the
    /// tool built, or (`compact: false`) valid text copied from an answer,
    /// its whitespace dropped on the way.
    public func succeed(resultText: UnsafeBufferPointer<UInt8>, compact: Bool = true) {
        guard !isFinished else { return }
        queue.writeEnvelope(in: slot, ok: true, failed: false) { output in
            output.append(",\"result\":")
            if compact { output.append(resultText) } else { output.appendMinified(resultText) }
            appendCost(to: output)
            output.append(0x7D)
        }
    }

    /// One line the tool formatted itself (without its newline), in the
    /// `toolLines` or `commandLines` style; `failsRun` makes the run exit 1 all the same (a
    /// check that found a token invalid).
    public func writeLine(_ text: UnsafeBufferPointer<UInt8>, failsRun: Bool = false) {
        guard !isFinished else { return }
        queue.writeLine(in: slot, failed: failsRun) { $0.append(text) }
    }

    /// One failed outcome: an envelope, or a message on stderr in the `toolLines` style.
    public func fail(_ error: RecordError) {
        guard !isFinished else { return }
        queue.countFailure(in: slot, error.kind)
        switch queue.style {
        case .envelopes:
            queue.writeEnvelope(in: slot, ok: false, failed: true) { output in
                if let raw {
                    output.append(",\"raw\":")
                    output.appendJSONString(raw)
                }
                output.append(",\"error\":")
                error.append(to: output)
                appendCost(to: output)
                output.append(0x7D)
            }
        case .toolLines:
            queue.writeDiagnostic(in: slot, "line \(line): \(error.kind.rawValue): \(error.message)")
        case .commandLines:
            queue.writeDiagnostic(in: slot, "\(error.kind.rawValue): \(error.message)")
        }
    }

    /// What one of the record's requests cost: written as the `cost` of its
    /// next envelope (with `--cost`), and counted in the run's estimate.
    public func charge(_ amount: Money) {
        owed += amount
        queue.charged += amount
    }

    /// `,"cost":…`, what the record was charged since its last envelope, with `--cost`.
    private func appendCost(to output: ByteBuffer) {
        guard queue.showsCost else { return }
        output.append(",\"cost\":")
        owed.append(to: output)
        owed = .zero
    }

    /// Marks the record complete; nothing more is written for it.
    public func finish() {
        guard !isFinished else { return }
        isFinished = true
        queue.finish(slot)
    }

    /// One result, and the record is complete.
    public func complete(_ result: Result<JSON, RecordError>) {
        switch result {
        case .success(let value): succeed(value)
        case .failure(let error): fail(error)
        }
        finish()
    }
}
