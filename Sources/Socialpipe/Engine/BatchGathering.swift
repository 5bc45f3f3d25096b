/// The state of the input, as far as batches care.
struct InputState {
    /// No more records will come.
    var ended = false
    /// No more records are taken in until some finish.
    var full = false
    /// When the last record was taken in (monotonic seconds).
    var lastRecordAt = 0.0
}

/// Batch gathering over a tool's `Batching`: which ready requests travel
/// together, how long a batch that is not full waits for more records, and
/// what becomes of each request once the batch is answered.
struct BatchGathering {
    let batching: Batching

    /// How long input may pause before a batch that is not full goes out.
    static let inputPause = 0.05

    /// Whether a batch that is not full should wait for more records.
    static func mayGrow(_ input: InputState, interrupted: Bool, now: Double) -> Bool {
        !interrupted && !input.ended && !input.full && now < input.lastRecordAt + inputPause
    }

    /// When a request waiting for companions stops waiting, if one of
    /// `ready` may (monotonic seconds).
    func companionWaitEnd(_ ready: [Engine.Exchange], _ input: InputState, interrupted: Bool, now: Double) -> Double? {
        guard Self.mayGrow(input, interrupted: interrupted, now: now), ready.contains(where: { $0.spec.batchKey != nil }) else {
            return nil
        }
        return input.lastRecordAt + Self.inputPause
    }

    /// Whether `lead` could lead a batch that is not yet full, counting the
    /// requests of `ready` from `index` that may join it, while more records
    /// may still come to fill it.
    func waitsForCompanions(_ lead: Engine.Exchange, in ready: [Engine.Exchange], from index: Int, input: InputState,
                            interrupted: Bool, now: Double) -> Bool {
        guard let batchKey = lead.spec.batchKey, lead.members.isEmpty, Self.mayGrow(input, interrupted: interrupted, now: now) else {
            return false
        }
        var gathered = 1
        for candidate in ready[index...] where mayJoin(candidate, batchKey, now: now) {
            gathered += 1
            if gathered >= batching.maximumBatch { return false }
        }
        return true
    }

    /// `lead`, or a batch of it and the requests of `ready` from `index`
    /// that may travel with it, taken out of `ready`.
    func gather(_ lead: Engine.Exchange, from ready: inout [Engine.Exchange], at index: Int, now: Double) -> Engine.Exchange {
        guard let batchKey = lead.spec.batchKey, lead.members.isEmpty else { return lead }
        var members = [lead]
        var position = index
        while position < ready.count && members.count < batching.maximumBatch {
            if mayJoin(ready[position], batchKey, now: now) {
                members.append(ready.remove(at: position))
            } else {
                position += 1
            }
        }
        let batch = Engine.Exchange(spec: batching.combine(members.map(\.spec)), order: lead.order, jobs: [])
        batch.members = members
        return batch
    }

    /// A request of the same batch key that is not a batch itself nor
    /// waiting out a backoff.
    private func mayJoin(_ candidate: Engine.Exchange, _ batchKey: String, now: Double) -> Bool {
        candidate.spec.batchKey == batchKey && candidate.members.isEmpty && candidate.notBefore <= now
    }

    /// What becomes of one request of an answered batch.
    enum Part {
        /// Its own answer, to be judged as if it had come alone.
        case answered(HTTPResponse)
        /// The API did not complete it: it goes out once more, in a later batch.
        case sendAgain
        /// It ends so.
        case ends(ResponsePolicy.Decision)
    }

    /// Each request of `batch` with its part of `answer`. A part the API did
    /// not complete goes out once more (not after a signal); twice not
    /// completed, its request fails. An answer that cannot be read may have
    /// applied any of the requests (`ResponsePolicy.unreadable`).
    func split(_ answer: Answer, of batch: Engine.Exchange, interrupted: Bool) -> [(Engine.Exchange, Part)] {
        func unreadable(_ member: Engine.Exchange, _ message: String) -> (Engine.Exchange, Part) {
            (member, .ends(ResponsePolicy.unreadable(status: answer.status, message, idempotent: member.spec.request.idempotent)))
        }
        guard let slots = batching.split(answer, count: batch.members.count) else {
            return batch.members.map { unreadable($0, "the batch's answer could not be read") }
        }
        return batch.members.enumerated().map { index, member in
            guard index < slots.count else { return unreadable(member, "the batch's answer has no part for this request") }
            switch slots[index] {
            case .response(let response):
                return (member, .answered(response))
            case .notCompleted:
                member.notCompleted += 1
                guard member.notCompleted > 1 || interrupted else { return (member, .sendAgain) }
                return (member, .ends(.giveUp(RecordError(.http, "the API did not complete this request in two batches; it was not applied",
                                                          status: answer.status), stopsCredentials: false)))
            }
        }
    }
}
