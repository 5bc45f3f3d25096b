/// How a request is shown, its secrets hidden (contract §5): a dry run's
/// `{method, url, headers, body}` and the lines `-v` writes on stderr. It
/// takes the request's parts, not the engine's types, so that it sits on
/// the records' floor beside `Redaction`.
enum RequestDescription {
    /// Header names whose values are secret: a token travels in no other header.
    static let secretHeaderNames: Set<String> = ["authorization"]

    /// `{method, url, headers, body}` with secrets hidden by name (the
    /// authorization, a URL's secret parameters and the service's
    /// `parameters`) and wherever one of `secrets` appears. `body` is the
    /// body's text; nil shows none.
    static func describe(method: String, url: String, headers: [String], body: String?, hiding secrets: [String],
                         parameters: Set<String> = []) -> JSON {
        let description = JSON.object()
        description.set("method", string: method)
        description.set("url", string: Redaction.hiding(secrets, in: Redaction.redactedURL(url, hiding: parameters)))
        let shown = JSON.array()
        for line in headers {
            shown.append(.string(Redaction.hiding(secrets, in: Redaction.redactedHeader(line, secretNames: secretHeaderNames))))
        }
        description.set("headers", shown)
        description.set("body", body.map { .string(Redaction.hiding(secrets, in: $0)) } ?? .null)
        return description
    }

    /// `METHOD URL`: `-v`'s line for a request going out.
    static func sentLine(method: String, url: String, parameters: Set<String> = []) -> String {
        "\(method) \(Redaction.redactedURL(url, hiding: parameters))"
    }

    /// `failed METHOD URL: MESSAGE (N ms)`: `-v`'s line for a transfer that brought no answer.
    static func failedLine(method: String, url: String, message: String, elapsed: Double,
                           parameters: Set<String> = []) -> String {
        "failed \(method) \(Redaction.redactedURL(url, hiding: parameters)): \(message) (\(Int(elapsed * 1000)) ms)"
    }

    /// Longest API message a `-v` line shows, in Unicode scalars.
    static let verboseMessageLimit = 200

    /// `STATUS METHOD URL (N ms)`, the service's detail, and for an answer
    /// judged an error the API's message, cut to `verboseMessageLimit`
    /// (`Diagnostics.say` escapes it). A message the API did not give
    /// (`HTTP 400`) would only repeat the status.
    static func verboseLine(status: Int, method: String, url: String, elapsed: Double, detail: String?,
                            error: RecordError?, parameters: Set<String> = []) -> String {
        var line = "\(status) \(method) \(Redaction.redactedURL(url, hiding: parameters)) (\(Int(elapsed * 1000)) ms)"
        if let detail { line += " " + detail }
        if let message = error?.message, message != "HTTP \(status)" {
            let scalars = message.unicodeScalars
            line += " " + (scalars.count > verboseMessageLimit
                ? String(String.UnicodeScalarView(scalars.prefix(verboseMessageLimit))) + "…" : message)
        }
        return line
    }

    /// `120 s`, or `more than a day` for a wait no run makes.
    static func describe(seconds: Double) -> String {
        seconds < 86_400 ? "\(Int(seconds.rounded(.up))) s" : "more than a day"
    }
}
