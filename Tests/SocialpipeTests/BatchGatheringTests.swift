import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// Batch gathering on its own: which ready requests travel together, how long
// a batch that is not full waits for more records, and what becomes of each
// request once the batch is answered.

/// Batches of up to three; the answer's parts are `slots` (nil: unreadable).
final class SlotBatching: Batching {
    var maximumBatch: Int { 3 }
    var slots: [BatchSlot]?
    init(_ slots: [BatchSlot]? = nil) { self.slots = slots }
    func combine(_ requests: [RequestSpec]) -> RequestSpec {
        RequestSpec(.form("POST", "http://test.invalid/batch", [Parameter("n", "\(requests.count)")]), rateLimitKey: "POST",
                    service: service)
    }
    func split(_ answer: Answer, count: Int) -> [BatchSlot]? { slots }
}

@Suite struct BatchGatheringTests {
    let now = 10.0
    /// Input that may still bring records: the last came 10 ms ago.
    let open = InputState(ended: false, full: false, lastRecordAt: 9.99)

    func exchange(_ name: String, key: String? = "feed", method: String = "POST", notBefore: Double = 0) -> Engine.Exchange {
        var spec = RequestSpec(.form(method, "http://test.invalid/\(name)"), rateLimitKey: "POST", service: service)
        spec.batchKey = key
        let exchange = Engine.Exchange(spec: spec, order: 0, jobs: [])
        exchange.notBefore = notBefore
        return exchange
    }

    func names(_ exchanges: [Engine.Exchange]) -> [String] {
        exchanges.map { String($0.spec.request.url.dropFirst("http://test.invalid/".count)) }
    }

    @Test func aBatchThatIsNotFullWaitsWhileInputMayBringMore() {
        let gathering = BatchGathering(batching: SlotBatching())
        let ready = [exchange("a"), exchange("b")]
        #expect(gathering.waitsForCompanions(ready[0], in: ready, from: 1, input: open, interrupted: false, now: now))
        #expect(gathering.companionWaitEnd(ready, open, interrupted: false, now: now) == 9.99 + BatchGathering.inputPause)
        var ended = open
        ended.ended = true
        var full = open
        full.full = true
        let paused = InputState(ended: false, full: false, lastRecordAt: now - BatchGathering.inputPause)
        for (input, interrupted) in [(ended, false), (full, false), (paused, false), (open, true)] {
            #expect(!gathering.waitsForCompanions(ready[0], in: ready, from: 1, input: input, interrupted: interrupted, now: now))
            #expect(gathering.companionWaitEnd(ready, input, interrupted: interrupted, now: now) == nil)
        }
    }

    @Test func aBatchThatCanFillGoesAtOnceAndARequestOfNoBatchNeverWaits() {
        let gathering = BatchGathering(batching: SlotBatching())
        let three = [exchange("a"), exchange("b"), exchange("c")]
        #expect(!gathering.waitsForCompanions(three[0], in: three, from: 1, input: open, interrupted: false, now: now))
        // Others of another key, or backing off, do not count towards filling it.
        let mixed = [exchange("a"), exchange("b", key: "other"), exchange("c", notBefore: 11)]
        #expect(gathering.waitsForCompanions(mixed[0], in: mixed, from: 1, input: open, interrupted: false, now: now))
        let alone = exchange("get", key: nil, method: "GET")
        #expect(!gathering.waitsForCompanions(alone, in: [alone], from: 1, input: open, interrupted: false, now: now))
        #expect(gathering.companionWaitEnd([alone], open, interrupted: false, now: now) == nil)
    }

    @Test func gatheringTakesUpToAFullBatchOfItsKeyAndLeavesTheRestInOrder() {
        let gathering = BatchGathering(batching: SlotBatching())
        var ready = [exchange("b"), exchange("x", key: "other"), exchange("c", notBefore: 11), exchange("d"), exchange("e"),
                     exchange("f")]
        let batch = gathering.gather(exchange("a"), from: &ready, at: 0, now: now)
        #expect(names(batch.members) == ["a", "b", "d"])
        #expect(names(ready) == ["x", "c", "e", "f"])
        #expect(batch.spec.request.body == Array("n=3".utf8) && batch.jobs.isEmpty)
        let alone = exchange("get", key: nil, method: "GET")
        #expect(gathering.gather(alone, from: &ready, at: 0, now: now) === alone)
        #expect(ready.count == 4)
    }

    func parts(_ gathering: BatchGathering, _ batch: Engine.Exchange, interrupted: Bool = false) -> [String] {
        let answer = Answer(HTTPResponse(status: 200, headers: [], body: []), body: ResponseBody([]))
        return gathering.split(answer, of: batch, interrupted: interrupted).map { member, part in
            let name = names([member])[0]
            switch part {
            case .answered(let response): return "\(name): answered \(response.status)"
            case .sendAgain: return "\(name): again"
            case .ends(let decision): return "\(name): " + written(decision)
            }
        }
    }

    func batch(_ members: [Engine.Exchange]) -> Engine.Exchange {
        let batch = Engine.Exchange(spec: members[0].spec, order: 0, jobs: [])
        batch.members = members
        return batch
    }

    /// Each part goes to its request; one not completed goes once more, then
    /// fails; a request the answer has no part for may have been applied.
    @Test func eachRequestGetsItsPartOfTheAnswer() {
        let gathering = BatchGathering(batching: SlotBatching([
            .response(HTTPResponse(status: 201, headers: [], body: [])), .notCompleted, .notCompleted,
        ]))
        let twice = exchange("c")
        twice.notCompleted = 1
        let members = [exchange("a"), exchange("b"), twice, exchange("d"), exchange("r", method: "GET")]
        #expect(parts(gathering, batch(members)) == [
            "a: answered 201",
            "b: again",
            "c: give up http 200: the API did not complete this request in two batches; it was not applied",
            "d: ambiguous ambiguous 200: the batch's answer has no part for this request; the request may or may not have been applied",
            "r: give up http 200: the batch's answer has no part for this request",
        ])
        #expect(members[1].notCompleted == 1 && twice.notCompleted == 2)
    }

    @Test func afterASignalAPartNotCompletedIsNotSentAgain() {
        let gathering = BatchGathering(batching: SlotBatching([.notCompleted]))
        #expect(parts(gathering, batch([exchange("a")]), interrupted: true)
                == ["a: give up http 200: the API did not complete this request in two batches; it was not applied"])
    }

    /// An answer that cannot be split may have applied any of the posts.
    @Test func anUnreadableAnswerEndsEveryRequest() {
        let gathering = BatchGathering(batching: SlotBatching(nil))
        #expect(parts(gathering, batch([exchange("a"), exchange("r", method: "GET")])) == [
            "a: ambiguous ambiguous 200: the batch's answer could not be read; the request may or may not have been applied",
            "r: give up http 200: the batch's answer could not be read",
        ])
    }
}
