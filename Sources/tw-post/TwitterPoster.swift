import Socialpipe

/// How a record becomes a post (`POST /2/tweets`, or `/1.1/statuses/update.json`
/// with `--api 1.1`) and how X's answer becomes its outcome.
final class TwitterPoster: RequestHandler {
    let credentials: CredentialStore
    let apiBase: String
    let legacy: Bool
    let thread: Bool
    /// The longest weighted length accepted; nil skips the check.
    let maxLength: Int?
    let dryRun: Bool
    let authorization = TwitterAuthorization()

    /// In a thread: the post being made now, the id of the last one made,
    /// and the line of a post that failed (the rest are then cancelled).
    private var threadInProgress: Job?
    private var previousLine: Int?
    private var previousID: String?
    private var brokenAt: Int?

    init(credentials: CredentialStore, apiBase: String, version: String, thread: Bool, maxLength: Int?, dryRun: Bool) {
        self.credentials = credentials
        self.apiBase = apiBase
        legacy = version == "1.1"
        self.thread = thread
        self.maxLength = maxLength
        self.dryRun = dryRun
    }

    func isReady(_ job: Job) -> Bool { !thread || threadInProgress == nil }

    /// A post id: digits, given as a string or an integer.
    static func postID(_ record: Record, _ key: StaticString) throws(RecordError) -> String? {
        guard let value = record.fields[key], !value.isNull else { return nil }
        let text: String
        if let number = value.integer {
            text = String(number)
        } else if let string = value.string {
            text = string
        } else {
            throw .input("\(key) must be a post id (a string of digits)")
        }
        guard (1...19).contains(text.utf8.count), text.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
            throw .input("\(key) must be a post id (1 to 19 digits), got \"\(text)\"")
        }
        return text
    }

    func request(for job: Job) throws(RecordError) -> HTTPRequest {
        if thread {
            if let brokenAt { throw RecordError(.cancelled, "an earlier post of the thread (line \(brokenAt)) failed") }
            threadInProgress = job
        }
        let record = job.record
        let text = try record.string("text") ?? ""
        var replyTo = try Self.postID(record, "reply_to")
        let quote = try Self.postID(record, "quote")
        var mediaIDs: [String] = []
        if let media = record.fields["media_ids"], !media.isNull {
            guard media.kind == .array, (1...4).contains(media.count) else {
                throw .input("media_ids must be an array of 1 to 4 media ids")
            }
            for element in media.elements {
                guard let id = element.string ?? element.integer.map({ String($0) }),
                      !id.isEmpty, id.utf8.allSatisfy({ (0x30...0x39).contains($0) }) else {
                    throw .input("media_ids must hold media ids (strings of digits)")
                }
                mediaIDs.append(id)
            }
        }
        if thread, let previousLine {
            replyTo = previousID ?? (dryRun ? "{id of line \(previousLine)}" : replyTo)
        }

        if text.isEmpty && mediaIDs.isEmpty { throw RecordError(.validation, "empty post: give text or media_ids") }
        if quote != nil && !mediaIDs.isEmpty {
            throw RecordError(.validation, "a post can carry a quote or media, not both")
        }
        if TweetLength.hasInvalidCharacter(text) {
            throw RecordError(.validation, "text contains a character X refuses (U+FFFE, U+FEFF or U+FFFF)")
        }
        if let maxLength {
            let length = TweetLength.weightedLength(text)
            if length > maxLength {
                throw RecordError(.validation, "text is \(length) characters by X's weighted count, over the limit of \(maxLength)")
            }
        }

        let stored = try credentials.twitter(recordProfile: try record.string("profile"))
        if legacy {
            var form = [Parameter("status", text)]
            if let replyTo {
                form.append(Parameter("in_reply_to_status_id", replyTo))
                // X ignores the reply unless its author is mentioned or this is set.
                form.append(Parameter("auto_populate_reply_metadata", "true"))
            }
            if let quote { form.append(Parameter("attachment_url", "https://x.com/i/status/\(quote)")) }
            if !mediaIDs.isEmpty { form.append(Parameter("media_ids", mediaIDs.joined(separator: ","))) }
            let url = apiBase + "/1.1/statuses/update.json"
            let signed = try authorization.sign(method: "POST", url: url, bodyParameters: form, credentials: stored)
            return HTTPRequest(method: "POST", url: url,
                               headers: [signed.header, "Content-Type: application/x-www-form-urlencoded", "Accept: application/json"],
                               body: PercentEncoding.formEncoded(form), idempotent: false,
                               rateLimitKey: "POST /1.1/statuses/update " + signed.identity)
        }

        let body = JSON.object()
        body.set("text", string: text)
        if let replyTo {
            let reply = JSON.object()
            reply.set("in_reply_to_tweet_id", string: replyTo)
            body.set("reply", reply)
        }
        if let quote { body.set("quote_tweet_id", string: quote) }
        if !mediaIDs.isEmpty {
            let ids = JSON.array()
            for id in mediaIDs { ids.append(.string(id)) }
            let media = JSON.object()
            media.set("media_ids", ids)
            body.set("media", media)
        }
        let url = apiBase + "/2/tweets"
        // RFC 5849 §3.4.1.3: a JSON body is not part of the signature.
        let signed = try authorization.sign(method: "POST", url: url, credentials: stored)
        return HTTPRequest(method: "POST", url: url,
                           headers: [signed.header, "Content-Type: application/json", "Accept: application/json"],
                           body: Array(body.dumped().utf8), idempotent: false,
                           rateLimitKey: "POST /2/tweets " + signed.identity)
    }

    func interpret(_ response: HTTPResponse, for job: Job) -> Verdict {
        let body = response.json
        if (200...299).contains(response.status) {
            let created = legacy ? body : body?["data"]
            let id = legacy ? created?["id_str"]?.string : created?["id"]?.string
            guard let created, let id else {
                return .failure(RecordError(.ambiguous, "HTTP \(response.status) without the created post in its body; the post may exist",
                                            status: response.status))
            }
            let result = JSON.object()
            result.set("id", string: id)
            result.set("text", string: created["text"]?.string ?? created["full_text"]?.string ?? "")
            return .success(result)
        }
        let (code, message) = describeError(response)
        let kind: RecordError.Kind
        switch (response.status, code) {
        case (_, "187"): kind = .duplicate
        case (403, _) where message.lowercased().contains("duplicate"): kind = .duplicate
        case (401, _), (_, "32"), (_, "89"), (_, "135"), (_, "215"): kind = .auth
        case (403, _): kind = .permission
        case (404, _), (_, "144"): kind = .notFound
        default: kind = .http
        }
        return .failure(RecordError(kind, message, status: response.status, code: code))
    }

    func isUsageCap(_ response: HTTPResponse) -> Bool {
        guard let body = response.json else { return false }
        return Self.problemType(body) == "usage-capped"
    }

    /// The suffix of a problem `type` after `/2/problems/` (the host differs between specs).
    static func problemType(_ body: JSON) -> String? {
        guard let type = body["type"]?.string else { return nil }
        guard let range = type.firstRange(of: "/2/problems/") else { return type }
        return String(type[range.upperBound...])
    }

    func describeError(_ response: HTTPResponse) -> (code: String?, message: String) {
        guard let body = response.json else { return (nil, "HTTP \(response.status)") }
        let errors = body["errors"]?.elements ?? []
        let legacyCode = errors.first?["code"]?.integer.map { String($0) }
        let type = Self.problemType(body)
        let code = legacyCode ?? (type == "about:blank" ? nil : type)
        if let title = body["title"]?.string {
            let detail = body["detail"]?.string
            var message = detail.map { $0 == title ? title : "\(title): \($0)" } ?? title
            let extra = errors.compactMap { $0["message"]?.string }
            if !extra.isEmpty { message += " (" + extra.joined(separator: "; ") + ")" }
            return (code, message)
        }
        let messages = errors.compactMap { $0["message"]?.string ?? $0["detail"]?.string }
        if !messages.isEmpty { return (code, messages.joined(separator: "; ")) }
        if let text = body["error"]?.string { return (code, text) }
        return (code, "HTTP \(response.status)")
    }

    func jobFinished(_ job: Job, result: Result<JSON, RecordError>) {
        guard thread else { return }
        if threadInProgress === job { threadInProgress = nil }
        switch result {
        case .success(let value):
            previousLine = job.record.line
            previousID = value["id"]?.string
        case .failure:
            if brokenAt == nil { brokenAt = job.record.line }
        }
    }
}
