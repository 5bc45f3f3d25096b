import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// Back-pressure on its own: a job behind the head of ordered output stops
// asking for more while it holds too many lines, and goes on once it may.

@Suite struct BackPressureTests {
    let queue = OutcomeQueue(ordered: true, style: .envelopes, output: OutputWriter(fd: open("/dev/null", O_WRONLY | O_CLOEXEC)))

    func tracked(_ reply: Reply) -> Engine.Tracked {
        Engine.Tracked(job: PagingJob(name: "\(reply.line)", reply: reply, tool: PagingTool()), order: reply.line)
    }

    func spec(_ name: String) -> RequestSpec {
        RequestSpec(.form("GET", "http://test.invalid/\(name)"), rateLimitKey: "GET", service: service)
    }

    func fill(_ reply: Reply, lines: Int) {
        for _ in 0..<lines { reply.succeed(JSON.object()) }
    }

    @Test func aJobBehindTheHeadMayFetchUntilItHoldsTheBoundOfLines() {
        let head = Reply(queue: queue, line: 1, input: nil)
        let behind = Reply(queue: queue, line: 2, input: nil)
        fill(behind, lines: BackPressure.lineBoundPerJob - 1)
        #expect(BackPressure.mayFetchMore(behind))
        fill(behind, lines: 1)
        #expect(!BackPressure.mayFetchMore(behind))
        // At the head, its lines go out as they come: it always may.
        fill(head, lines: BackPressure.lineBoundPerJob)
        #expect(BackPressure.mayFetchMore(head))
    }

    /// Parked jobs go on, in the order they stopped, once their record
    /// reaches the head; the others stay parked.
    @Test func parkedJobsAreReleasedOnceTheyMayInTheOrderTheyStopped() {
        var pressure = BackPressure()
        let head = Reply(queue: queue, line: 1, input: nil)
        let second = Reply(queue: queue, line: 2, input: nil)
        let third = Reply(queue: queue, line: 3, input: nil)
        fill(second, lines: BackPressure.lineBoundPerJob)
        fill(third, lines: BackPressure.lineBoundPerJob)
        pressure.park(tracked(third), spec("third"), notBefore: 7)
        pressure.park(tracked(second), spec("second"), notBefore: 0)
        #expect(pressure.released().isEmpty)
        #expect(pressure.parked.count == 2)
        head.finish()
        // The second record is now the head: its job goes on, with its request and wait.
        let released = pressure.released()
        #expect(released.map(\.tracked.order) == [2])
        #expect(released.map(\.spec.request.url) == ["http://test.invalid/second"] && released[0].notBefore == 0)
        #expect(pressure.parked.map(\.tracked.order) == [3] && pressure.parked[0].notBefore == 7)
    }

    @Test func inputReadsAheadEnoughToFillABatchForEachRequestInFlight() {
        #expect(BackPressure.readAhead(parallel: 1, maximumBatch: nil) == 16)
        #expect(BackPressure.readAhead(parallel: 8, maximumBatch: nil) == 32)
        #expect(BackPressure.readAhead(parallel: 4, maximumBatch: 50) == 250)
    }
}
