import Socialpipe

/// How a record becomes a post (`POST /2/tweets`, or `/1.1/statuses/update.json`
/// with `--api 1.1`), and, with `--thread`, how posts chain.
final class TwitterPoster: RecordTool {
    let x: XSetup
    let legacy: Bool
    let thread: Bool
    /// The longest weighted length accepted; nil skips the check.
    let maxLength: Int?
    let dryRun: Bool

    /// In a thread: the post being made now, the line and id of the last one
    /// made, and the line of a post that failed (the rest are then cancelled).
    fileprivate var threadInProgress: PostJob?
    fileprivate var previousLine: Int?
    fileprivate var previousID: String?
    fileprivate var brokenAt: Int?

    init(x: XSetup, legacy: Bool, thread: Bool, maxLength: Int?, dryRun: Bool) {
        self.x = x
        self.legacy = legacy
        self.thread = thread
        self.maxLength = maxLength
        self.dryRun = dryRun
    }

    func start(_ record: Record, reply: Reply) -> Job? {
        PostJob(record: record, reply: reply, poster: self)
    }

    /// What a record asks to post, checked before anything is sent.
    struct Post {
        var text: String
        var replyTo: String?
        var quote: String?
        var mediaIDs: [String]
    }

    func post(of record: Record) throws(RecordError) -> Post {
        let text = try record.string("text") ?? ""
        let replyTo = try record.id("reply_to")
        let quote = try record.id("quote")
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
        return Post(text: text, replyTo: replyTo, quote: quote, mediaIDs: mediaIDs)
    }

    /// The request that makes `post`.
    func request(for post: Post, authorizer: XAuthorizer) -> RequestSpec {
        if legacy {
            var form = [Parameter("status", post.text)]
            if let replyTo = post.replyTo {
                form.append(Parameter("in_reply_to_status_id", replyTo))
                // X ignores the reply unless its author is mentioned or this is set.
                form.append(Parameter("auto_populate_reply_metadata", "true"))
            }
            if let quote = post.quote { form.append(Parameter("attachment_url", "https://x.com/i/status/\(quote)")) }
            if !post.mediaIDs.isEmpty { form.append(Parameter("media_ids", post.mediaIDs.joined(separator: ","))) }
            return x.request("POST", "/1.1/statuses/update.json",
                             headers: ["Content-Type: application/x-www-form-urlencoded", "Accept: application/json"],
                             body: PercentEncoding.formEncoded(form), endpoint: "POST /1.1/statuses/update",
                             authorizer: authorizer)
        }
        let body = JSON.object()
        body.set("text", string: post.text)
        if let replyTo = post.replyTo {
            let reply = JSON.object()
            reply.set("in_reply_to_tweet_id", string: replyTo)
            body.set("reply", reply)
        }
        if let quote = post.quote { body.set("quote_tweet_id", string: quote) }
        if !post.mediaIDs.isEmpty {
            let ids = JSON.array()
            for id in post.mediaIDs { ids.append(.string(id)) }
            let media = JSON.object()
            media.set("media_ids", ids)
            body.set("media", media)
        }
        // RFC 5849 §3.4.1.3: a JSON body is not part of the signature.
        return x.request("POST", "/2/tweets", headers: ["Content-Type: application/json", "Accept: application/json"],
                         body: Array(body.dumped().utf8), endpoint: "POST /2/tweets", authorizer: authorizer)
    }

    /// The outcome of X's 2xx answer to a post: the created post, or
    /// `ambiguous` when the answer does not show it (it may exist).
    func created(_ answer: Answer) -> Result<JSON, RecordError> {
        let created = legacy ? answer.json : answer.json?["data"]
        let id = legacy ? created?["id_str"]?.string : created?["id"]?.string
        guard let created, let id else {
            return .failure(RecordError(.ambiguous, "HTTP \(answer.status) without the created post in its body; the post may exist",
                                        status: answer.status))
        }
        let result = JSON.object()
        result.set("id", string: id)
        result.set("text", string: created["text"]?.string ?? created["full_text"]?.string ?? "")
        return .success(result)
    }
}

/// One post: checked, then sent once (after a token refresh, if its OAuth
/// 2.0 token needs one).
final class PostJob: Job {
    let record: Record
    let reply: Reply
    private unowned let poster: TwitterPoster
    private var refreshing: TokenRefreshing?
    private var request: RequestSpec?

    init(record: Record, reply: Reply, poster: TwitterPoster) {
        self.record = record
        self.reply = reply
        self.poster = poster
    }

    func begin() -> JobStep {
        if poster.thread {
            // Each post replies to the one before: it waits for it.
            if poster.threadInProgress != nil { return .hold }
            if let brokenAt = poster.brokenAt {
                return .fail(RecordError(.cancelled, "an earlier post of the thread (line \(brokenAt)) failed"))
            }
            poster.threadInProgress = self
        }
        do throws(RecordError) {
            var post = try poster.post(of: record)
            if poster.thread, let previousLine = poster.previousLine {
                post.replyTo = poster.previousID ?? (poster.dryRun ? "{id of line \(previousLine)}" : post.replyTo)
            }
            if poster.dryRun && poster.thread { poster.previousLine = record.line }
            let authorizer = try poster.x.authorizer(for: record)
            let request = poster.request(for: post, authorizer: authorizer)
            let refreshing = TokenRefreshing(x: poster.x, authorizer: authorizer)
            self.request = request
            self.refreshing = refreshing
            return refreshing.step(for: request)
        } catch {
            return .fail(error)
        }
    }

    func received(_ answer: Answer) -> JobStep {
        if let step = refreshing?.received(answer) { return step }
        switch poster.created(answer) {
        case .success(let result):
            if poster.thread {
                poster.previousLine = record.line
                poster.previousID = result["id"]?.string
            }
            reply.succeed(result)
            return .done
        case .failure(let error):
            return .fail(error)
        }
    }

    func recovering(from error: RecordError) -> JobStep? {
        refreshing?.recovering(from: error, request: request)
    }

    func ending(with error: RecordError) -> RecordError {
        if poster.thread && poster.brokenAt == nil { poster.brokenAt = record.line }
        return refreshing?.ending(with: error) ?? error
    }

    func ended() {
        if poster.threadInProgress === self { poster.threadInProgress = nil }
    }
}
