import Socialpipe
/// Graph batch requests (graph-api.md §9): up to 50 requests travel as one
/// `POST /` whose form field `batch` lists them; the token and proof are
/// the outer request's, so no `relative_url` carries a token. The answer is
/// an array in request order, each part `{code, body}` with the body as
/// JSON text, or `null` for a part the API did not complete.
public final class GraphBatching: Batching {
    public let maximumBatch: Int
    /// The API base and version the batch goes to.
    private let versionRoot: String

    /// The most Graph accepts in one batch.
    public static let largest = 50

    public convenience init(setup: GraphSetup, maximumBatch: Int) {
        self.init(versionRoot: setup.versionRoot, maximumBatch: maximumBatch)
    }

    /// Batches to `versionRoot` (see `GraphSetup.versionRoot`).
    public init(versionRoot: String, maximumBatch: Int) {
        self.versionRoot = versionRoot
        self.maximumBatch = min(maximumBatch, Self.largest)
    }

    /// The batch key of requests that may share a batch: the same credentials.
    public static func key(for authorizer: GraphAuthorizer) -> String { "graph " + authorizer.identity }

    public func combine(_ requests: [RequestSpec]) -> RequestSpec {
        let items = JSON.array()
        for spec in requests {
            let request = spec.request
            let item = JSON.object()
            item.set("method", string: request.method)
            // Compared as bytes: String.hasPrefix compares characters, and a
            // combining mark after the `/` would make the root not match.
            let root = Array((versionRoot + "/").utf8)
            let url = Array(request.url.utf8)
            let path = url.starts(with: root) ? String(decoding: url[root.count...], as: UTF8.self) : request.url
            item.set("relative_url", string: path)
            if let body = request.body { item.set("body", string: String(decoding: body, as: UTF8.self)) }
            items.append(item)
        }
        let first = requests[0]
        var batch = HTTPRequest.form("POST", versionRoot + "/", [Parameter("batch", items.dumped()), Parameter("include_headers", "false")])
        batch.idempotent = requests.allSatisfy(\.request.idempotent)
        return RequestSpec(batch, rateLimitKey: first.rateLimitKey, service: first.service, authorizer: first.authorizer)
    }

    public func split(_ answer: Answer, count: Int) -> [BatchSlot]? {
        guard let parts = answer.json, parts.kind == .array else { return nil }
        var slots: [BatchSlot] = []
        for part in parts.elements {
            if part.isNull {
                slots.append(.notCompleted)
                continue
            }
            guard let status = part["code"]?.integer, let body = part["body"]?.string else { return nil }
            var headers: [(name: String, value: String)] = []
            for header in part["headers"]?.elements ?? [] {
                if let name = header["name"]?.string, let value = header["value"]?.string {
                    headers.append((name.lowercased(), value))
                }
            }
            slots.append(.response(HTTPResponse(status: Int(status), headers: headers, body: Array(body.utf8))))
        }
        return slots
    }
}
