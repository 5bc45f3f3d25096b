import Glibc
import Socialpipe

// What the unit-test targets share: a scripted transport and a plain
// service for driving the engine, scratch directories, and a capture of
// standard error. Public API only, so that it builds like any target.

/// Answers requests as a script says, each after a number of turns of the loop.
public final class ScriptedTransport: Transport {
    /// The answer to the `count`-th request for a URL (1-based), and how many turns it takes.
    public typealias Script = (_ request: HTTPRequest, _ count: Int) -> (TransferOutcome, turns: Int)
    private let script: Script
    public private(set) var sent: [HTTPRequest] = []
    private var counts: [String: Int] = [:]
    private var pending: [(id: Int, outcome: TransferOutcome, turns: Int)] = []

    public init(_ script: @escaping Script) { self.script = script }

    public func start(_ request: HTTPRequest, id: Int) -> Bool {
        sent.append(request)
        counts[request.url, default: 0] += 1
        let (outcome, turns) = script(request, counts[request.url] ?? 1)
        pending.append((id, outcome, turns))
        return true
    }

    public func cancel(id: Int) { pending.removeAll { $0.id == id } }

    public func perform() -> [(id: Int, outcome: TransferOutcome, elapsed: Double)] {
        for index in pending.indices { pending[index].turns -= 1 }
        let done = pending.filter { $0.turns <= 0 }
        pending.removeAll { $0.turns <= 0 }
        return done.map { ($0.id, $0.outcome, 0) }
    }

    public var nextTimeout: Int? { pending.isEmpty ? nil : 0 }

    public func wait(_ descriptors: [pollfd], timeout: Int32) {
        var descriptors = descriptors
        _ = poll(&descriptors, nfds_t(descriptors.count), pending.isEmpty ? min(timeout, 50) : 0)
    }

    /// The requests sent for URLs containing `text`.
    public func sent(containing text: String) -> [HTTPRequest] { sent.filter { $0.url.contains(text) } }
}

/// JSON answers; 503 is a server failure, 402 a refusal for billing, other statuses final errors.
public final class PlainService: APIService, Sendable {
    public init() {}

    public func readRateLimits(_ response: HTTPResponse, into state: inout RateLimitState) {}
    public func classify(_ response: HTTPResponse, body: ResponseBody) -> ResponseClass {
        switch response.status {
        case 200...299: return .success
        case 503: return .transient(RecordError(.http, "unavailable", status: 503))
        case 402: return .failure(RecordError(.billing, "credits used up", status: 402))
        default: return .failure(RecordError(.http, "HTTP \(response.status)", status: response.status))
        }
    }
}

/// The tool the in-process runs are of, and the service their requests go to.
public let testTool = ToolDescription(name: "engine-test", usage: "", summary: "", epilogue: "", primaryField: "name")
public let service = PlainService()

extension ArgumentParser.Request {
    /// The arguments of a run, for `try #require(parser.parse(…).arguments)`; nil for `--help` or `--version`.
    public var arguments: ParsedArguments? {
        guard case .run(let arguments) = self else { return nil }
        return arguments
    }
}

public func answer(_ body: String, status: Int = 200, retryAfter: String? = nil) -> TransferOutcome {
    .response(HTTPResponse(status: status, headers: retryAfter.map { [("retry-after", $0)] } ?? [], body: Array(body.utf8)))
}

/// A fresh directory under /tmp with `files` (name → bytes) and the links
/// `links` (name → target), removed by the caller's `defer { removeTree(…) }`.
public func scratchDirectory(_ files: [String: [UInt8]] = [:], links: [String: String] = [:]) -> String {
    var template = Array("/tmp/socialpipe-test-XXXXXX".utf8CString)
    let path = String(cString: mkdtemp(&template)!)
    for (name, bytes) in files {
        let full = path + "/" + name
        if let slash = full.lastIndex(of: "/") { mkdir(String(full[..<slash]), 0o700) }
        let descriptor = open(full, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        _ = bytes.withUnsafeBufferPointer { write(descriptor, $0.baseAddress, $0.count) }
        close(descriptor)
    }
    for (name, target) in links { symlink(target, path + "/" + name) }
    return path
}

public func removeTree(_ path: String) {
    _ = path.withCString { system("rm -rf '" + String(cString: $0) + "'") }
}

public func mode(_ path: String) -> mode_t {
    var status = stat()
    return stat(path, &status) == 0 ? status.st_mode & 0o777 : 0
}


/// What `body` writes on fd 2.
public func capturingStandardError(_ body: () throws -> Void) throws -> String {
    var ends: [Int32] = [0, 0]
    precondition(pipe(&ends) == 0)
    let saved = dup(2)
    dup2(ends[1], 2)
    close(ends[1])
    defer {
        dup2(saved, 2)
        close(saved)
        close(ends[0])
    }
    try body()
    dup2(saved, 2)
    var bytes: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 4096)
    while true {
        let count = read(ends[0], &chunk, chunk.count)
        if count <= 0 { break }
        bytes += chunk[..<count]
    }
    return String(decoding: bytes, as: UTF8.self)
}

/// A job of one request: the answer's JSON is the record's result.
public final class OneRequestJob: Job {
    public let reply: Reply
    let spec: RequestSpec

    public init(reply: Reply, spec: RequestSpec) {
        self.reply = reply
        self.spec = spec
    }

    public func begin() -> JobStep { .send(spec) }

    public func received(_ event: JobEvent) -> JobStep {
        event.step(answered: { answer in
            reply.succeed(answer.json ?? .null)
            return .done
        })
    }
}
