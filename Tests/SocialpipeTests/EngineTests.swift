import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// The loop and the engine driven in-process: records through a pipe, the
// outcomes into a file, requests answered by a scripted transport.


/// A tool whose jobs fetch `pages` pages of `perPage` lines each from `/<name>/<page>`.
final class PagingTool: RecordTool {
    var pages = 1
    var perPage = 1
    var sharingKey: ((String) -> RequestSpec.Sharing?)?
    var batchKey: String?
    /// Decides whether a job may begin yet.
    var mayBegin: (String) -> Bool = { _ in true }
    var ended: [String] = []
    var failsRun = false
    /// What each request costs, when priced; `each` per line of its page.
    var price: Price?

    func start(_ record: Record, reply: Reply) -> Job? {
        PagingJob(name: (try? record.string("name")) ?? nil ?? "?", reply: reply, tool: self)
    }
}

final class PagingJob: Job {
    let name: String
    let reply: Reply
    let tool: PagingTool
    var page = 0

    init(name: String, reply: Reply, tool: PagingTool) {
        self.name = name
        self.reply = reply
        self.tool = tool
    }

    func request() -> RequestSpec {
        var spec = RequestSpec(method: "GET", url: "http://test.invalid/\(name)/\(page)", idempotent: true,
                               rateLimitKey: "GET", service: service)
        spec.sharing = tool.sharingKey?(name)
        spec.batchKey = tool.batchKey
        spec.price = tool.price
        return spec
    }

    func begin() -> JobStep { tool.mayBegin(name) ? .send(request()) : .hold }

    func next(after answer: Answer) -> JobStep {
        for index in 0..<tool.perPage {
            let result = JSON.object()
            result.set("page", integer: Int64(page))
            result.set("n", integer: Int64(index))
            result.set("got", answer.json ?? .null)
            reply.succeed(result, failsRun: tool.failsRun)
        }
        page += 1
        if page < tool.pages { return .send(request()) }
        tool.ended.append(name)
        return .done
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), ending: { error in
            tool.ended.append(name)
            return error
        })
    }
}

/// Runs `tool` over `lines` with `options` and returns the exit status and the output lines.
func runLoop(_ tool: RecordTool, lines: [String], options: [String] = [], transport: Transport,
             batching: Batching? = nil) throws -> (Socialpipe.ExitStatus, [String]) {
    var ends: [Int32] = [0, 0]
    #expect(pipe(&ends) == 0)
    let text = lines.map { $0 + "\n" }.joined()
    _ = text.utf8CString.withUnsafeBufferPointer { write(ends[1], $0.baseAddress, $0.count - 1) }
    close(ends[1])
    var template = Array("/tmp/engine-test-XXXXXX".utf8CString)
    let outputFD = mkstemp(&template)
    defer {
        close(outputFD)
        close(ends[0])
        unlink(template)
    }
    let defaults = EngineSettings(parallel: 4)
    let parser = ArgumentParser(tool: testTool, options: defaults.requestOptions(apiBaseHelp: "")
                                + [CommonOptions.cost, CommonOptions.maxCost])
    let arguments = try #require(parser.parse(options + ["--quiet"]).arguments)
    let engine = try Engine(defaults.reading(arguments), tool: testTool, transport: transport)
    engine.batching = batching
    let loop = try EventLoop(tool: testTool, arguments: arguments, source: .lines(fd: ends[0]), outputFD: outputFD,
                             engine: engine, watchesSignals: false)
    let status = loop.run(tool)
    return (status, linesWritten(to: outputFD))
}

/// The lines written to the file open at `fd`, read from its start.
func linesWritten(to fd: Int32) -> [String] {
    lseek(fd, 0, SEEK_SET)
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = read(fd, &chunk, chunk.count)
        if count <= 0 { break }
        bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self).split(separator: "\n").map(String.init)
}

func lineNumbers(_ output: [String]) -> [Int] {
    output.compactMap { line in
        guard case .success(let envelope) = JSON.parse(line) else { return nil }
        return envelope["line"]?.integer.map { Int($0) }
    }
}

/// Record "a"'s first page answers only after many turns of the loop; what
/// record "b" asks for meanwhile, behind the head of the output, is counted.
final class SlowHead {
    var bPagesBeforeA = 0
    private var aDone = false

    /// Pages of "a" up to `lastPage` answer `{}`, the first after `firstPageTurns` turns; "b"'s answer `body`.
    func transport(lastPage: Int, firstPageTurns: Int, body: String) -> ScriptedTransport {
        ScriptedTransport { [self] request, _ in
            if request.url.contains("/b/") && !aDone { bPagesBeforeA += 1 }
            if request.url.contains("/a/") {
                aDone = request.url.hasSuffix("/\(lastPage)")
                return (answer("{}"), request.url.hasSuffix("/0") ? firstPageTurns : 1)
            }
            return (answer(body), 1)
        }
    }
}

@Suite struct OutcomeOrderTests {
    /// The first record's answer comes last.
    let slowFirst = ScriptedTransport { request, _ in
        (answer("{}"), turns: request.url.contains("/a/") ? 5 : 1)
    }

    @Test func orderedOutputFollowsTheInputWhateverFinishesFirst() throws {
        let tool = PagingTool()
        tool.perPage = 2
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\""], transport: slowFirst)
        #expect(status == .success)
        #expect(lineNumbers(output) == [1, 1, 2, 2, 3, 3])
        #expect(tool.ended == ["b", "c", "a"])
    }

    @Test func unorderedOutputWritesEachOutcomeWhenKnown() throws {
        let tool = PagingTool()
        let (_, output) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\""], options: ["--unordered"], transport: slowFirst)
        #expect(lineNumbers(output) == [2, 3, 1])
    }

    @Test func aSuccessMayStillMakeTheRunFail() throws {
        let tool = PagingTool()
        tool.failsRun = true
        let (status, output) = try runLoop(tool, lines: ["\"a\""], transport: ScriptedTransport { _, _ in (answer("{}"), 1) })
        #expect(output.count == 1 && output[0].hasPrefix("{\"ok\":true"))
        #expect(status == .recordFailed)
    }
}

@Suite struct SchedulerTests {
    @Test func aHeldJobDoesNotHoldUpTheJobsBehindIt() throws {
        let tool = PagingTool()
        // "a" may begin only once "c", behind it, has ended.
        tool.mayBegin = { [unowned tool] name in name != "a" || tool.ended.contains("c") }
        let transport = ScriptedTransport { _, _ in (answer("{}"), 1) }
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\""], transport: transport)
        #expect(status == .success)
        #expect(tool.ended == ["b", "c", "a"])
        #expect(lineNumbers(output) == [1, 2, 3])
    }

    @Test func retriesAreCountedPerRequestNotPerRecord() throws {
        // Pages 1 and 2 each fail twice before they answer: with --retries 2
        // each has its full retries, and the record succeeds after 7 requests.
        let tool = PagingTool()
        tool.pages = 3
        let transport = ScriptedTransport { request, count in
            let failing = !request.url.hasSuffix("/0") && count <= 2
            return (failing ? answer("{}", status: 503, retryAfter: "0") : answer("{}"), 1)
        }
        let (status, output) = try runLoop(tool, lines: ["\"a\""], options: ["--retries", "2"], transport: transport)
        #expect(status == .success)
        #expect(output.count == 3)
        #expect(transport.sent.count == 7)
    }

    @Test func aRequestThatRunsOutOfRetriesEndsItsRecordWithEveryAttemptCounted() throws {
        let tool = PagingTool()
        tool.pages = 2
        let transport = ScriptedTransport { request, _ in
            (request.url.hasSuffix("/1") ? answer("{}", status: 503, retryAfter: "0") : answer("{}"), 1)
        }
        let (status, output) = try runLoop(tool, lines: ["\"a\""], options: ["--retries", "1"], transport: transport)
        #expect(status == .recordFailed)
        #expect(output.count == 2)
        let failure = try JSON.parse(output[1]).get()
        #expect(failure["error"]?["attempts"]?.integer == 3)
    }

    @Test func aJobBehindTheHeadStopsFetchingOnceItHoldsEnoughLines() throws {
        // "a" answers only after many turns; "b" has 10 pages of 1000 lines.
        let tool = PagingTool()
        tool.pages = 10
        tool.perPage = 1000
        let head = SlowHead()
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\""],
                                           transport: head.transport(lastPage: 9, firstPageTurns: 200, body: "{}"))
        #expect(status == .success)
        #expect(output.count == 20_000)
        #expect(lineNumbers(output) == Array(repeating: 1, count: 10_000) + Array(repeating: 2, count: 10_000))
        // Two pages fill the bound of 2,000 lines; the third request waits.
        #expect(head.bPagesBeforeA <= 3)
    }

    @Test func aJobBehindTheHeadStopsFetchingOnceTheLinesHeldReachTheByteBound() throws {
        // "a" answers only after many turns; "b" has 3 pages of 400 lines of 96 KiB
        // each: the second page brings what waits behind the head past 64 MiB, long
        // before the bound of 2,000 lines, and the third request waits.
        let tool = PagingTool()
        tool.pages = 3
        tool.perPage = 400
        let large = "\"" + String(repeating: "x", count: 96 << 10) + "\""
        let head = SlowHead()
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\""],
                                           transport: head.transport(lastPage: 2, firstPageTurns: 400, body: large))
        #expect(status == .success)
        #expect(lineNumbers(output) == Array(repeating: 1, count: 1200) + Array(repeating: 2, count: 1200))
        #expect(head.bPagesBeforeA == 2)
    }

    /// An answer past the transport's cap is not asked for again, as it would
    /// be as long again: a read ends `http`, posts (a batch) `ambiguous`.
    @Test func anAnswerTooLongToReadIsFinal() throws {
        let tool = PagingTool()
        let reads = ScriptedTransport { _, _ in (.tooLarge(status: 200, limit: 16 << 20), 1) }
        let (status, output) = try runLoop(tool, lines: ["\"a\""], transport: reads)
        #expect(status == .recordFailed)
        #expect(reads.sent.count == 1)
        #expect(output.count == 1)
        #expect(output.allSatisfy { $0.contains("\"kind\":\"http\",\"status\":200") && $0.contains("16 MiB")
            && $0.contains("\"attempts\":1") })
        tool.batchKey = "feed"
        let posts = ScriptedTransport { _, _ in (.tooLarge(status: 200, limit: 16 << 20), 1) }
        let (_, batched) = try runLoop(tool, lines: ["\"a\"", "\"b\""], transport: posts, batching: ListBatching())
        #expect(posts.sent.count == 1)
        #expect(batched.count == 2)
        #expect(batched.allSatisfy { $0.contains("\"kind\":\"ambiguous\"") && $0.contains("may or may not have been applied") })
    }

    @Test func identicalRequestsAreSentOnceAndAKeptAnswerServesLaterJobs() throws {
        let tool = PagingTool()
        tool.sharingKey = { _ in RequestSpec.Sharing(key: "same", keepAnswer: true) }
        let transport = ScriptedTransport { _, _ in (answer("{\"v\":1}"), 3) }
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\""], options: ["-j", "1"], transport: transport)
        #expect(status == .success)
        #expect(transport.sent.count == 1)
        #expect(output.count == 3)
        #expect(output.allSatisfy { $0.contains("\"got\":{\"v\":1}") })
    }

    /// An error answer is shared like any other, and every record it ends
    /// counts the request it took, whether it joined in flight or later.
    @Test func aSharedErrorEndsEveryRecordThatAskedAndCountsTheRequest() throws {
        let tool = PagingTool()
        tool.sharingKey = { _ in RequestSpec.Sharing(key: "same", keepAnswer: true) }
        let transport = ScriptedTransport { _, _ in (answer("{}", status: 404), 3) }
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\""], options: ["-j", "1"], transport: transport)
        #expect(status == .recordFailed)
        #expect(transport.sent.count == 1)
        #expect(output.count == 3)
        #expect(output.allSatisfy { $0.contains("\"status\":404") && $0.contains("\"attempts\":1") })
    }
}

/// Gathers up to three requests into one whose body lists their URLs; the
/// answer holds one part per request, as `parts` says (the default: the
/// second part a 400, the others their index).
final class ListBatching: Batching {
    var batches: [Int] = []
    var maximumBatch: Int { 3 }
    /// The part for the `index`-th request of the `batch`-th batch (both from 0).
    var parts: (_ batch: Int, _ index: Int) -> BatchSlot = { _, index in
        index == 1 ? .response(HTTPResponse(status: 400, headers: [], body: []))
                   : .response(HTTPResponse(status: 200, headers: [], body: Array("\"part \(index)\"".utf8)))
    }

    func combine(_ requests: [RequestSpec]) -> RequestSpec {
        batches.append(requests.count)
        return RequestSpec(method: "POST", url: "http://test.invalid/batch", body: Array(requests.map(\.request.url).joined(separator: " ").utf8),
                           idempotent: false, rateLimitKey: "POST", service: service)
    }

    func split(_ answer: Answer, count: Int) -> [BatchSlot]? {
        let batch = batches.count - 1
        return (0..<count).map { parts(batch, $0) }
    }
}

@Suite struct BatchingTests {
    @Test func readyRequestsTravelTogetherAndTheAnswerIsSplitBack() throws {
        let tool = PagingTool()
        tool.batchKey = "feed"
        let batching = ListBatching()
        let transport = ScriptedTransport { _, _ in (answer("{}"), 1) }
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\"", "\"d\""], options: ["-j", "1"],
                                           transport: transport, batching: batching)
        #expect(status == .recordFailed)
        #expect(batching.batches == [3, 1])
        #expect(transport.sent.count == 2)
        #expect(lineNumbers(output) == [1, 2, 3, 4])
        #expect(output[0].contains("\"got\":\"part 0\"") && output[1].contains("HTTP 400") && output[3].contains("part 0"))
    }

    /// A part the API did not complete goes out once more, in a later batch;
    /// not completed twice, its record fails and nothing else is touched.
    @Test func aPartNotCompletedIsSentOnceMore() throws {
        let tool = PagingTool()
        tool.batchKey = "feed"
        let batching = ListBatching()
        batching.parts = { batch, index in
            if batch == 0 && index != 2 || batch == 1 && index == 0 { return .notCompleted }
            return .response(HTTPResponse(status: 200, headers: [], body: Array("\"b\(batch)p\(index)\"".utf8)))
        }
        let transport = ScriptedTransport { _, _ in (answer("{}"), 1) }
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\""], options: ["-j", "1"],
                                           transport: transport, batching: batching)
        #expect(status == .recordFailed)
        #expect(batching.batches == [3, 2])
        #expect(lineNumbers(output) == [1, 2, 3])
        #expect(output[0].contains("did not complete") && output[0].contains("\"attempts\":2"))
        #expect(output[1].contains("\"got\":\"b1p1\""))
        #expect(output[2].contains("\"got\":\"b0p2\""))
    }

    /// An answer that cannot be split may have applied any of the posts.
    @Test func anUnreadableBatchAnswerLeavesEveryPostAmbiguous() throws {
        final class Unreadable: Batching {
            var maximumBatch: Int { 3 }
            func combine(_ requests: [RequestSpec]) -> RequestSpec {
                RequestSpec(method: "POST", url: "http://test.invalid/batch", idempotent: false, rateLimitKey: "POST", service: service)
            }
            func split(_ answer: Answer, count: Int) -> [BatchSlot]? { nil }
        }
        let tool = PostingTool()
        tool.batchKey = "feed"
        let transport = ScriptedTransport { _, _ in (answer("<html>"), 1) }
        let (_, output) = try runLoop(tool, lines: ["\"a\"", "\"b\""], transport: transport, batching: Unreadable())
        #expect(transport.sent.count == 1)
        #expect(output.count == 2 && output.allSatisfy { $0.contains("\"kind\":\"ambiguous\"") })
    }
}

/// A 400 is a throttle (blocking for `regain` seconds when set), a 503 a
/// server failure; both carry a trace id. Spaces requests while `spacing` is set.
final class ThrottlingService: APIService {
    var spacing: Double?
    var regain: Double?
    func readRateLimits(_ response: HTTPResponse, into state: inout RateLimitState) {
        state.spacing = spacing
        if response.status == 400, let regain {
            state.remaining = 0
            state.reset = Clock.wall() + regain
        }
    }
    func classify(_ response: HTTPResponse, body: ResponseBody) -> ResponseClass {
        var error = RecordError(.rateLimit, "throttled", status: response.status, code: "32")
        error.extras.append(("fbtrace_id", .string("T1")))
        switch response.status {
        case 400: return .throttled(error)
        case 503:
            error.kind = .http
            error.code = "2"
            return .transient(error)
        default: return .success
        }
    }
}

/// One POST per record to `/<name>`, with the service given.
final class PostingTool: RecordTool {
    var service: APIService = PlainService()
    var batchKey: String?
    var price: Price?
    func start(_ record: Record, reply: Reply) -> Job? {
        let name = (try? record.string("name")) ?? nil ?? "?"
        var spec = RequestSpec(method: "POST", url: "http://test.invalid/\(name)", idempotent: false,
                               rateLimitKey: "token", service: service)
        spec.batchKey = batchKey
        spec.price = price
        return OneRequestJob(reply: reply, spec: spec)
    }
}

@Suite struct ThrottlingTests {
    /// Once waiting for a throttled token gives out, later records on it
    /// fail without another request (never hammer a throttled token).
    @Test func aTokenThrottledBeyondPatienceSendsNothingMore() throws {
        let tool = PostingTool()
        tool.service = ThrottlingService()
        let transport = ScriptedTransport { request, _ in
            (answer("{}", status: request.url.hasSuffix("/a") ? 400 : 200), 1)
        }
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\""], options: ["-j", "1", "--retries", "0"],
                                           transport: transport)
        #expect(status == .recordFailed)
        #expect(transport.sent.count == 1)
        #expect(output.count == 3 && output.allSatisfy { $0.contains("\"kind\":\"rate_limit\"") })
        #expect(output[1].contains("not sent") && output[1].contains("\"attempts\":0"))
    }

    /// The error of a wait beyond --max-wait, and of a post the server failed,
    /// keep the API's own fields.
    @Test func givingUpKeepsTheAPIsFields() throws {
        let tool = PostingTool()
        let throttling = ThrottlingService()
        throttling.regain = 3600
        tool.service = throttling
        let transport = ScriptedTransport { request, _ in
            (answer("{}", status: request.url.hasSuffix("/a") ? 400 : 503), 1)
        }
        let (_, output) = try runLoop(tool, lines: ["\"a\"", "\"b\""], options: ["-j", "1", "--max-wait", "0"], transport: transport)
        #expect(output.count == 2)
        #expect(output[0].contains("\"kind\":\"rate_limit\"") && output[0].contains("\"code\":\"32\"")
                && output[0].contains("\"fbtrace_id\":\"T1\"") && output[0].contains("\"reset\":"))
        // The token is blocked for an hour: b is not sent.
        #expect(transport.sent.count == 1)
        let (_, posted) = try runLoop(tool, lines: ["\"b\""], transport: transport)
        #expect(posted[0].contains("\"kind\":\"ambiguous\"") && posted[0].contains("\"code\":\"2\"")
                && posted[0].contains("\"fbtrace_id\":\"T1\""))
    }

    /// While usage runs high, requests on the token go out spaced apart.
    @Test func highUsageSpacesRequests() throws {
        let tool = PostingTool()
        let throttling = ThrottlingService()
        throttling.spacing = 0.2
        tool.service = throttling
        let transport = ScriptedTransport { _, _ in (answer("{}"), 1) }
        let start = Clock.monotonic()
        // One at a time: each answer reports the usage that spaces the next.
        let (status, _) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\""], options: ["-j", "1"], transport: transport)
        #expect(status == .success)
        #expect(transport.sent.count == 3)
        #expect(Clock.monotonic() - start >= 0.4)
    }
}

@Suite struct CurlLinkTests {
    /// The test binary does not link libcurl, like a tool that forgot to:
    /// the transport refuses to start instead of calling a null function.
    @Test func aToolBuiltWithoutLibcurlStopsWithAClearMessage() {
        do {
            _ = try CurlTransport(parallel: 1, timeout: 1, caFile: nil, userAgent: "test")
            Issue.record("libcurl is linked into the test binary; this test cannot tell")
        } catch {
            guard case .configuration(let message) = error else {
                Issue.record("expected a configuration error, got \(error)")
                return
            }
            #expect(message.contains("without libcurl"))
        }
    }
}
