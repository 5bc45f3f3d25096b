import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// `.sendWhileWriting`: a list's next page is asked for before the page in
// hand is written, at the head of the output; behind it, the page is written
// first, so that back-pressure counts its lines before the next request.

/// Each record (`{"name": …}`) reads three pages, `/<name>/1` to `/<name>/3`,
/// and notes how many requests had started when each page was written.
final class PipelinedTool: RecordTool {
    let transport: ScriptedTransport
    /// Per record, the requests started when each of its pages was written.
    var startedAtWrite: [String: [Int]] = [:]

    init(transport: ScriptedTransport) { self.transport = transport }

    func start(_ record: Record, reply: Reply) -> Job? {
        PipelinedJob(name: ((try? record.string("name")) ?? nil) ?? "?", reply: reply, tool: self)
    }
}

final class PipelinedJob: Job {
    let name: String
    let reply: Reply
    let tool: PipelinedTool
    var page = 1

    init(name: String, reply: Reply, tool: PipelinedTool) {
        self.name = name
        self.reply = reply
        self.tool = tool
    }

    func request() -> RequestSpec {
        RequestSpec(.form("GET", "http://test.invalid/\(name)/\(page)"), rateLimitKey: "GET", service: service)
    }

    func begin() -> JobStep { .send(request()) }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: { _ in
            let write = { [self] in
                tool.startedAtWrite[name, default: []].append(tool.transport.sent(containing: "/\(name)/").count)
                reply.succeed(JSON.object())
            }
            guard page < 3 else {
                write()
                return .done
            }
            page += 1
            return .sendWhileWriting(request(), write: write)
        })
    }
}

@Suite struct SendWhileWritingTests {
    @Test func atTheHeadTheNextPageIsAskedForBeforeThisOneIsWritten() throws {
        let transport = ScriptedTransport { _, _ in (answer("{}"), turns: 1) }
        let tool = PipelinedTool(transport: transport)
        let (status, output) = try runLoop(tool, lines: [#"{"name":"a"}"#], transport: transport)
        #expect(status == .success)
        #expect(lineNumbers(output) == [1, 1, 1])
        #expect(tool.startedAtWrite["a"] == [2, 3, 3])
    }

    /// The second record's pages arrive while the first record (slow) holds
    /// the head: each is written before its next page is asked for.
    @Test func behindTheHeadThePageIsWrittenFirst() throws {
        let transport = ScriptedTransport { request, _ in (answer("{}"), turns: request.url.hasSuffix("/a/1") ? 20 : 1) }
        let tool = PipelinedTool(transport: transport)
        let (status, output) = try runLoop(tool, lines: [#"{"name":"a"}"#, #"{"name":"b"}"#], options: ["-j", "2"],
                                           transport: transport)
        #expect(status == .success)
        #expect(lineNumbers(output) == [1, 1, 1, 2, 2, 2])
        #expect(tool.startedAtWrite["b"] == [1, 2, 3])
    }
}
