/// Puts outcomes on stdout in input order (or as they complete with
/// `--unordered`): a record's outcomes wait until every earlier record is done.
final class OutcomeQueue {
    final class Slot {
        var outcomes: [Outcome] = []
        var done = false
    }

    private let ordered: Bool
    private let format: OutcomeFormat
    private let output: OutputWriter
    private var slots: [Slot] = []
    private var head = 0

    /// Whether any record failed.
    private(set) var anyFailed = false
    /// Records opened and not yet written out (finished, in unordered mode).
    private(set) var unfinished = 0

    init(ordered: Bool, format: OutcomeFormat, output: OutputWriter) {
        self.ordered = ordered
        self.format = format
        self.output = output
    }

    func open() -> Slot {
        let slot = Slot()
        unfinished += 1
        if ordered { slots.append(slot) }
        return slot
    }

    func emit(_ outcome: Outcome, in slot: Slot) {
        if case .failure = outcome.result { anyFailed = true }
        if !ordered || (head < slots.count && slots[head] === slot) {
            format.write(outcome, to: output)
        } else {
            slot.outcomes.append(outcome)
        }
    }

    func finish(_ slot: Slot) {
        slot.done = true
        guard ordered else {
            unfinished -= 1
            return
        }
        while head < slots.count && slots[head].done {
            head += 1
            unfinished -= 1
            if head < slots.count {
                let next = slots[head]
                for outcome in next.outcomes { format.write(outcome, to: output) }
                next.outcomes.removeAll()
            }
        }
        if head > 1024 && head * 2 > slots.count {
            slots.removeFirst(head)
            head = 0
        }
    }
}

/// A record's way back to the output: results and errors, then `finish()`.
public final class Reply {
    private let queue: OutcomeQueue
    private let slot: OutcomeQueue.Slot
    /// The record's line (or argument index).
    public let line: Int
    private let input: JSON?
    private let inputText: [UInt8]?
    private let raw: String?
    private var finished = false

    /// `text` is the record's line, echoed as it came when it holds no secret.
    init(queue: OutcomeQueue, line: Int, input: JSON?, text: UnsafeBufferPointer<UInt8>? = nil, raw: String?) {
        self.queue = queue
        self.slot = queue.open()
        self.line = line
        self.raw = raw
        if let input, let text, !Redaction.containsSecret(input.raw) {
            self.input = input
            self.inputText = Array(text)
        } else {
            self.input = input.map(Redaction.redacted)
            self.inputText = nil
        }
    }

    /// Writes one successful outcome whose result is compact JSON text the tool built.
    public func succeed(text: [UInt8], attachment: Any? = nil) {
        guard !finished else { return }
        queue.emit(Outcome(line: line, input: input, inputText: inputText, raw: raw, result: .success(.null),
                           resultText: text, attachment: attachment), in: slot)
    }

    /// Writes one successful outcome.
    public func succeed(_ result: JSON, attachment: Any? = nil) {
        guard !finished else { return }
        queue.emit(Outcome(line: line, input: input, inputText: inputText, raw: raw, result: .success(result), resultText: nil, attachment: attachment), in: slot)
    }

    /// Writes one failed outcome.
    public func fail(_ error: RecordError) {
        guard !finished else { return }
        queue.emit(Outcome(line: line, input: input, inputText: inputText, raw: raw, result: .failure(error), resultText: nil, attachment: nil), in: slot)
    }

    /// Marks the record complete; nothing more is written for it.
    public func finish() {
        guard !finished else { return }
        finished = true
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
