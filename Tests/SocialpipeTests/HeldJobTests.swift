import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// The engine's holds and dry runs for jobs of several requests (what a
// thread of posts with uploads needs).

/// Each record sends `/<name>/up` and then, once the record before it has
/// ended, `/<name>/post`: what a thread does with its uploads.
final class WaitingTool: RecordTool {
    var ended: [String] = []
    var endedSet: Set<String> = []
    var names: [String] = []

    func start(_ record: Record, reply: Reply) -> Job? {
        let name = (try? record.string("name")) ?? nil ?? "?"
        names.append(name)
        return WaitingJob(name: name, before: names.count > 1 ? names[names.count - 2] : nil, reply: reply, tool: self)
    }
}

final class WaitingJob: Job {
    let name: String
    let before: String?
    let reply: Reply
    let tool: WaitingTool
    var posted = false
    var shown = JSON.array()

    init(name: String, before: String?, reply: Reply, tool: WaitingTool) {
        self.name = name
        self.before = before
        self.reply = reply
        self.tool = tool
    }

    func request(_ step: String) -> RequestSpec {
        RequestSpec(method: "POST", url: "http://test.invalid/\(name)/\(step)", idempotent: step == "up",
                    rateLimitKey: step, service: service)
    }

    var began = false

    /// The upload first; asked again after a hold, the post.
    func begin() -> JobStep {
        if began { return post() }
        began = true
        return .send(request("up"))
    }

    func post() -> JobStep {
        if let before, !tool.endedSet.contains(before) { return .hold }
        posted = true
        return .send(request("post"))
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: { answer in
            if !posted { return post() }
            reply.succeed(answer.json ?? .null)
            return ended(.done)
        }, ending: { error in
            _ = ended(.done)
            return error
        })
    }

    func dryRun(_ description: JSON, of request: RequestSpec) -> JobStep {
        shown.append(description)
        if !posted {
            posted = true
            return .send(self.request("post"))
        }
        let result = JSON.object()
        result.set("shown", shown)
        reply.succeed(result)
        return ended(.done)
    }

    /// `step`, the job's last: the tool learns it has ended.
    func ended(_ step: JobStep) -> JobStep {
        tool.ended.append(name)
        tool.endedSet.insert(name)
        return step
    }
}

@Suite struct HeldJobTests {
    /// The first post is slow: the second record uploads meanwhile, then waits
    /// for it before posting; the third waits for the second.
    @Test func aBegunJobWaitsForAnotherToEndThenGoesOn() throws {
        let transport = ScriptedTransport { request, _ in
            (answer("{\"url\":\"\(request.url)\"}"), turns: request.url.hasSuffix("/a/post") ? 6 : 1)
        }
        let tool = WaitingTool()
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\""], transport: transport)
        #expect(status == .success)
        #expect(lineNumbers(output) == [1, 2, 3])
        let urls = transport.sent.map { String($0.url.dropFirst("http://test.invalid/".count)) }
        #expect(urls.firstIndex(of: "b/up")! < urls.firstIndex(of: "a/post")! + 2, "b uploads while a posts")
        #expect(urls.filter { $0.hasSuffix("/post") } == ["a/post", "b/post", "c/post"])
        #expect(tool.ended == ["a", "b", "c"])
    }

    /// A dry run shows each request the job would make, in one result.
    @Test func aDryRunShowsEveryRequestOfAJob() throws {
        let transport = ScriptedTransport { _, _ in (answer("{}"), turns: 1) }
        let (status, output) = try runLoop(WaitingTool(), lines: ["\"a\""], options: ["--dry-run"], transport: transport)
        #expect(status == .success)
        #expect(transport.sent.isEmpty)
        let envelope = try #require(output.first.flatMap { try? JSON.parse($0).get() })
        let shown = try #require(envelope["result"]?["shown"])
        #expect(shown.elements.compactMap { $0["url"]?.string } == ["http://test.invalid/a/up", "http://test.invalid/a/post"])
    }
}
