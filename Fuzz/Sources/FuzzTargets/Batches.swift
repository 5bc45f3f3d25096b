@testable import Socialpipe
@testable import SocialpipeGraph

/// The Graph batch (`GraphBatching`): any answer body is split without a
/// crash, into one slot per part when it is an array of parts, else
/// refused; requests combined into a batch come back out of its form body
/// as they went in; an answer made for a batch splits back into the parts
/// it was made of.
///
/// Input: the answer body; read as lines, also the requests of a batch.
public enum Batches {
    static let versionRoot = "https://graph.example/v27.0"
    nonisolated(unsafe) static let batching = GraphBatching(versionRoot: versionRoot, maximumBatch: 50)
    nonisolated(unsafe) static let service = GraphService()

    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        let bytes = Array(data)
        splitAnyAnswer(bytes)
        roundTrip(bytes.split(separator: 0x0A, omittingEmptySubsequences: false).prefix(GraphBatching.largest).map(Array.init))
    }

    static func answer(_ body: [UInt8]) -> Answer {
        Answer(HTTPResponse(status: 200, headers: [], body: body), body: ResponseBody(body))
    }

    static func splitAnyAnswer(_ body: [UInt8]) {
        let slots = batching.split(answer(body), count: 1)
        guard let slots else { return }
        guard case .success(let parts) = body.withUnsafeBufferPointer({ JSON.parse($0) }), parts.kind == .array else {
            require(false, "an answer that is no JSON array was split: \(escaped(body))")
            return
        }
        require(slots.count == parts.count, "\(slots.count) slots from an answer of \(parts.count) parts: \(escaped(body))")
        for (slot, part) in zip(slots, parts.elements) {
            switch slot {
            case .notCompleted:
                require(part.isNull, "a part that is not null read as not completed: \(escaped(body))")
            case .response(let response):
                require(Int64(response.status) == part["code"]?.integer && response.body == part["body"]?.string.map { Array($0.utf8) },
                        "a slot's status or body is not its part's: \(escaped(body))")
                require(response.headers.allSatisfy { $0.name == $0.name.lowercased() }, "a slot's header names are not lower-case")
            }
        }
    }

    static func roundTrip(_ lines: [[UInt8]]) {
        guard !lines.isEmpty else { return }
        let methods = ["GET", "POST", "DELETE"]
        var requests: [RequestSpec] = []
        for line in lines {
            let method = methods[Int(line.first ?? 0) % methods.count]
            let path = String(decoding: line.dropFirst(), as: UTF8.self)
            let body = method == "POST" ? PercentEncoding.formEncoded(PercentEncoding.formPairs(Array(line.dropFirst()))) : nil
            requests.append(RequestSpec(method: method, url: versionRoot + "/" + path, body: body, idempotent: method == "GET",
                                        rateLimitKey: "graph fuzz", service: service))
        }
        let batch = batching.combine(requests).request
        require(batch.method == "POST" && batch.url == versionRoot + "/", "the batch goes to \(batch.method) \(batch.url)")
        require(batch.idempotent == requests.allSatisfy(\.request.idempotent), "the batch's idempotence is not its requests'")
        let form = PercentEncoding.formPairs(batch.body ?? [])
        require(form.map { String(decoding: $0.name, as: UTF8.self) } == ["batch", "include_headers"],
                "the batch form holds \(form.map { escaped($0.name) })")
        guard case .success(let items) = form[0].value.withUnsafeBufferPointer({ JSON.parse($0) }), items.kind == .array,
              items.count == requests.count else {
            require(false, "the batch field is not an array of \(requests.count) items: \(escaped(form[0].value))")
            return
        }
        for (item, request) in zip(items.elements, requests.map(\.request)) {
            let relative = Array(request.url.utf8.dropFirst(versionRoot.utf8.count + 1))
            let relativeURL = item["relative_url"]?.string.map { Array($0.utf8) }
            let what = "the item \(item.dumped()) is not the request \(request.method) \(escaped(relative))"
            require(item["method"]?.string == request.method && item["body"]?.string.map { Array($0.utf8) } == request.body, what)
            require(relativeURL == relative, what)
        }

        // An answer made of one part per request, every third one null.
        let parts = JSON.array()
        for (index, line) in lines.enumerated() {
            if index % 3 == 2 {
                parts.append(.null)
                continue
            }
            let part = JSON.object()
            part.set("code", integer: 200 + Int64(index))
            let body = JSON.object()
            body.set(member: "echo", string: String(decoding: line, as: UTF8.self))
            part.set("body", string: body.dumped())
            parts.append(part)
        }
        let slots = batching.split(answer(Array(parts.dumped().utf8)), count: lines.count)
        require(slots?.count == lines.count, "an answer of \(lines.count) parts split into \(slots?.count ?? -1) slots")
        for (index, slot) in (slots ?? []).enumerated() {
            switch slot {
            case .notCompleted:
                require(index % 3 == 2, "part \(index) read as not completed")
            case .response(let response):
                require(index % 3 != 2 && response.status == 200 + index, "part \(index) read with status \(response.status)")
                guard case .success(let body) = response.body.withUnsafeBufferPointer({ JSON.parse($0) }) else {
                    require(false, "part \(index)'s body is not its JSON: \(escaped(response.body))")
                    return
                }
                require(body["echo"]?.string.map { Array($0.utf8) } == Array(String(decoding: lines[index], as: UTF8.self).utf8),
                        "part \(index)'s body changed: \(escaped(response.body))")
            }
        }
    }
}
