import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// JobStep.sendAfter: a job asks for its next request to go out only after a
// wait (fb-auth polling a device login at Graph's interval). The wait is the
// loop's timer, not a sleep: other jobs go on meanwhile.

/// Polls `/<name>` until the `answers`-th answer is a success; each error
/// answer (as a device login's "pending") is polled again after `interval`.
final class PollingTool: RecordTool {
    var interval = 0.2
    /// Whether a success also waits before the next poll (the other way in).
    var waitAfterSuccess = false
    var polls = 3
    /// Waits by record name, instead of `interval`.
    var intervals: [String: Double] = [:]
    /// One rate-limit key for every job's requests (one endpoint), instead of one each.
    var sharedKey: String?

    func start(_ record: Record, reply: Reply) -> Job? {
        PollingJob(name: (try? record.string("name")) ?? nil ?? "?", reply: reply, tool: self)
    }
}

final class PollingJob: Job {
    let name: String
    let reply: Reply
    let tool: PollingTool
    var answered = 0

    init(name: String, reply: Reply, tool: PollingTool) {
        self.name = name
        self.reply = reply
        self.tool = tool
    }

    var request: RequestSpec {
        RequestSpec(method: "POST", url: "http://test.invalid/\(name)", idempotent: true, rateLimitKey: tool.sharedKey ?? name,
                    service: service)
    }

    func begin() -> JobStep { .send(request) }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), recovering: recovering(from:))
    }

    func next(after answer: Answer) -> JobStep {
        answered += 1
        if tool.waitAfterSuccess && answered < tool.polls {
            return .sendAfter(request, seconds: tool.intervals[name] ?? tool.interval)
        }
        reply.succeed(answer.json ?? .null)
        return .done
    }

    func recovering(from error: RecordError) -> JobStep? {
        answered += 1
        return .sendAfter(request, seconds: tool.interval)
    }
}

/// Answers as a script says and notes when each request went out and how
/// often the loop waited.
final class TimedTransport: Transport {
    let inner: ScriptedTransport
    private(set) var sentAt: [(url: String, time: Double)] = []
    private(set) var waits = 0

    init(_ script: @escaping ScriptedTransport.Script) { inner = ScriptedTransport(script) }

    func start(_ request: HTTPRequest, id: Int) -> Bool {
        sentAt.append((request.url, Clock.monotonic()))
        return inner.start(request, id: id)
    }
    func cancel(id: Int) { inner.cancel(id: id) }
    func perform() -> [(id: Int, outcome: TransferOutcome, elapsed: Double)] { inner.perform() }
    var nextTimeout: Int? { inner.nextTimeout }
    func wait(_ descriptors: [pollfd], timeout: Int32) {
        waits += 1
        inner.wait(descriptors, timeout: timeout)
    }

    func times(_ text: String) -> [Double] { sentAt.filter { $0.url.contains(text) }.map(\.time) }
}

@Suite struct DelayedSendTests {
    /// A pending answer, then another, then the token: three polls, each
    /// after the interval, and the loop slept through the waits.
    @Test func aRequestAskedForAfterAWaitGoesOutNoSooner() throws {
        let tool = PollingTool()
        let transport = TimedTransport { _, count in (count < 3 ? answer("{}", status: 400) : answer("{\"token\":1}"), 1) }
        let start = Clock.monotonic()
        let (status, output) = try runLoop(tool, lines: ["\"a\""], transport: transport)
        #expect(status == .success)
        #expect(output.count == 1 && output[0].contains("\"token\":1"))
        let times = transport.times("/a")
        #expect(times.count == 3)
        for (earlier, later) in zip(times, times.dropFirst()) { #expect(later - earlier >= 0.2) }
        #expect(Clock.monotonic() - start < 5)
        // Each wait of 0.2 s is a few timed sleeps of the transport, not a busy loop.
        #expect(transport.waits < 60)
    }

    /// The same from `received`, and the wait holds back only its own job.
    @Test func otherJobsGoOnWhileOneWaits() throws {
        let tool = PollingTool()
        tool.waitAfterSuccess = true
        tool.interval = 0.3
        tool.polls = 2
        let transport = TimedTransport { _, _ in (answer("{}"), 1) }
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\""], options: ["-j", "1"], transport: transport)
        #expect(status == .success)
        #expect(output.count == 2)
        let a = transport.times("/a"), b = transport.times("/b")
        #expect(a.count == 2 && b.count == 2)
        // b's first request went out while a waited for its second.
        #expect(b[0] < a[1])
        #expect(a[1] - a[0] >= 0.3 && b[1] - b[0] >= 0.3)
    }

    /// Two records polling the same endpoint (two uploads asking for their
    /// status): the one told to wait less asks first, not behind the other.
    @Test func aLongerWaitOnTheSameEndpointDoesNotHoldAShorterOne() throws {
        let tool = PollingTool()
        tool.waitAfterSuccess = true
        tool.polls = 2
        tool.intervals = ["a": 0.6, "b": 0.05]
        tool.sharedKey = "GET /status"
        let transport = TimedTransport { _, _ in (answer("{}"), 1) }
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\""], options: ["-j", "2"], transport: transport)
        #expect(status == .success)
        #expect(output.count == 2)
        let a = transport.times("/a"), b = transport.times("/b")
        #expect(a.count == 2 && b.count == 2)
        #expect(b[1] < a[1], "b's poll waited behind a's longer wait")
    }

    /// A wait of zero (or less) is no wait.
    @Test func aWaitOfZeroSendsAtOnce() throws {
        let tool = PollingTool()
        tool.interval = -1
        let transport = TimedTransport { _, count in (count < 3 ? answer("{}", status: 400) : answer("{}"), 1) }
        let start = Clock.monotonic()
        let (status, _) = try runLoop(tool, lines: ["\"a\""], transport: transport)
        #expect(status == .success)
        #expect(transport.times("/a").count == 3)
        #expect(Clock.monotonic() - start < 0.5)
    }
}
