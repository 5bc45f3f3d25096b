import Socialpipe
import SocialpipeX
import TwPostMedia
import TwitterText

/// How a record becomes a post (`POST /2/tweets`, or `/1.1/statuses/update.json`
/// with `--api 1.1`), and, with `--thread`, how posts chain.
final class TwitterPoster: RecordTool {
    let x: XSetup
    let legacy: Bool
    let thread: Bool
    /// The longest weighted length accepted; nil skips the check.
    let maxLength: Int?
    /// Nothing is sent (`--dry-run`, as `x` was set up).
    let dryRun: Bool
    /// Where the files records name must be (`--media-dir`).
    let mediaDirectory: ConfinedDirectory

    /// In a thread: the post being made now, the record uploading its files
    /// while it waits (at most one runs ahead), the line and id of the last
    /// post made, and the line of a post that failed (the rest are then
    /// cancelled).
    fileprivate var threadInProgress: PostJob?
    fileprivate var uploadingAhead: PostJob?
    fileprivate var previousLine: Int?
    fileprivate var previousID: String?
    fileprivate var brokenAt: Int?

    init(x: XSetup, legacy: Bool, thread: Bool, maxLength: Int?, mediaDirectory: ConfinedDirectory) {
        self.x = x
        self.legacy = legacy
        self.thread = thread
        self.maxLength = maxLength
        dryRun = x.dryRun
        self.mediaDirectory = mediaDirectory
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
        /// Files to upload first; their ids follow `mediaIDs`.
        var media: [XMediaFile] = []
        /// Whether the text holds a URL (X charges more for such a post).
        var containsURL = false
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
        let files = try Self.mediaFiles(of: record)
        if text.isEmpty && mediaIDs.isEmpty && files.isEmpty {
            throw RecordError(.validation, "empty post: give text, media or media_ids")
        }
        if quote != nil && !(mediaIDs.isEmpty && files.isEmpty) {
            throw RecordError(.validation, "a post can carry a quote or media, not both")
        }
        if mediaIDs.count + files.count > 4 {
            throw RecordError(.validation, "a post carries at most 4 media: media_ids and media give \(mediaIDs.count + files.count)")
        }
        if TweetLength.hasInvalidCharacter(text) {
            throw RecordError(.validation, "text contains a character X refuses (U+FFFE, U+FEFF or U+FFFF)")
        }
        if let maxLength, TweetLength.isSurelyLonger(text, than: maxLength) {
            throw RecordError(.validation, "text is \(text.unicodeScalars.count) code points, far over the limit of \(maxLength) "
                + "by X's weighted count")
        }
        // The text is scanned once for its length and its URLs.
        let measured = maxLength == nil ? nil : TweetLength.measure(text)
        if let maxLength, let measured, measured.weightedLength > maxLength {
            throw RecordError(.validation, "text is \(measured.weightedLength) characters by X's weighted count, "
                              + "over the limit of \(maxLength)")
        }
        // Only a record that passed every other check has its files opened.
        var media: [XMediaFile] = []
        for item in files {
            let file: OpenFile
            do throws(LocalFile.Refusal) {
                file = try mediaDirectory.open(item.path)
            } catch {
                throw .input("media: \(error.message)")
            }
            media.append(try XMediaFile(file: file, category: item.category, alt: item.alt))
        }
        try Self.checkMix(media, alongside: mediaIDs.count)
        return Post(text: text, replyTo: replyTo, quote: quote, mediaIDs: mediaIDs, media: media,
                    containsURL: measured?.containsURL ?? TweetLength.containsURL(text))
    }

    /// X takes at most 4 images, or 1 GIF, or 1 video, in a post, on any
    /// plan: a mix it would refuse is refused before any upload. Media ids
    /// already uploaded count as media of an unknown kind.
    static func checkMix(_ media: [XMediaFile], alongside uploaded: Int) throws(RecordError) {
        let gifs = media.filter { $0.category == "tweet_gif" }.count
        let videos = media.filter { $0.category.hasSuffix("_video") }.count
        guard gifs + videos > 0, media.count + uploaded > 1 else { return }
        var parts: [String] = []
        if gifs > 0 { parts.append(gifs == 1 ? "1 GIF" : "\(gifs) GIFs") }
        if videos > 0 { parts.append(videos == 1 ? "1 video" : "\(videos) videos") }
        let images = media.count - gifs - videos
        if images > 0 { parts.append(images == 1 ? "1 image" : "\(images) images") }
        if uploaded > 0 { parts.append("\(uploaded) of media_ids") }
        throw RecordError(.validation, "X takes at most 4 images, or 1 GIF, or 1 video in a post: this one has "
                          + parts.joined(separator: ", ") + " (a GIF sent as an image takes category tweet_image)")
    }

    /// What the app's `plan` forbids (contract §7): on self-serve, quote
    /// posts and more than one cashtag. Checked before any request.
    func checkPlan(_ post: Post, _ plan: XPlan) throws(RecordError) {
        guard plan == .selfServe else { return }
        if post.quote != nil {
            throw RecordError(.validation, "quote posts need an Enterprise plan; this app's plan is self-serve "
                              + "(give --plan enterprise, or set twitter.plan in the profile, if it is Enterprise)")
        }
        let cashtags = Cashtags.count(in: post.text)
        if cashtags > 1 {
            throw RecordError(.validation, "a post of a self-serve app takes at most one cashtag; this text has \(cashtags)")
        }
    }

    /// What X charges for `post` once made: more when its text holds a URL.
    func price(of post: Post) -> Price {
        x.price(post.containsURL ? .postCreateURL : .postCreate)
    }

    /// What a record may cost all told: its post and its alt texts.
    func mostCost(of post: Post) -> Money {
        price(of: post).most + x.prices[.mediaMetadata] * post.media.filter { $0.alt != nil }.count
    }

    /// A file a record asks to attach, as written in it.
    struct MediaItem {
        var path: String
        var alt: String?
        var category: String?
    }

    /// The record's `media`: paths, or `{path, alt?, category?}`.
    static func mediaFiles(of record: Record) throws(RecordError) -> [MediaItem] {
        guard let media = record.fields["media"], !media.isNull else { return [] }
        let shape = "media must be an array of 1 to 4 files: paths, or {path, alt?, category?}"
        guard media.kind == .array, (1...4).contains(media.count) else { throw .input(shape) }
        var items: [MediaItem] = []
        for element in media.elements {
            if let path = element.string {
                items.append(MediaItem(path: path))
                continue
            }
            guard element.kind == .object, let path = element["path"]?.string else { throw .input(shape) }
            var item = MediaItem(path: path)
            for (key, value) in element.members {
                switch key {
                case "path": break
                case "alt":
                    guard value.isNull || value.kind == .string else { throw .input("media: alt must be a string") }
                    // An empty alt text is none: nothing to set.
                    item.alt = value.string.flatMap { $0.isEmpty ? nil : $0 }
                case "category":
                    guard let category = value.string, XMediaFile.limits.contains(where: { $0.category == category }) else {
                        throw .input("media: category must be one of "
                                     + XMediaFile.limits.map(\.category).joined(separator: ", "))
                    }
                    item.category = category
                default:
                    throw .input("media: unknown member \"\(key)\" (a file is {path, alt?, category?})")
                }
            }
            // X counts alt text in code points (its schema's maxLength), not as a reader sees characters.
            if let length = item.alt?.unicodeScalars.count, length > XMediaFile.altTextLimit {
                throw RecordError(.validation, "media: the alt text of \(path) is \(length) characters (code points); "
                                  + "X takes up to \(XMediaFile.altTextLimit)")
            }
            items.append(item)
        }
        return items
    }

    /// The request that makes `post`.
    func request(for post: Post, authorizer: XAuthorizer) -> RequestSpec {
        var request: HTTPRequest
        let endpoint: String
        if legacy {
            var form = [Parameter("status", post.text)]
            if let replyTo = post.replyTo {
                form.append(Parameter("in_reply_to_status_id", replyTo))
                // X ignores the reply unless its author is mentioned or this is set.
                form.append(Parameter("auto_populate_reply_metadata", "true"))
            }
            if let quote = post.quote { form.append(Parameter("attachment_url", "https://x.com/i/status/\(quote)")) }
            if !post.mediaIDs.isEmpty { form.append(Parameter("media_ids", post.mediaIDs.joined(separator: ","))) }
            request = .form("POST", x.apiBase + "/1.1/statuses/update.json", form, headers: [])
            endpoint = "POST /1.1/statuses/update"
        } else {
            request = .json("POST", x.apiBase + "/2/tweets", body(of: post), headers: [])
            endpoint = "POST /2/tweets"
        }
        // A post's Accept has always come after its Content-Type (a dry run shows them).
        request.headers += HTTPRequest.acceptJSON
        var spec = x.request(request, endpoint: endpoint, authorizer: authorizer)
        spec.price = price(of: post)
        return spec
    }

    /// The JSON body of a v2 post; RFC 5849 §3.4.1.3: it is not part of the signature.
    private func body(of post: Post) -> JSON {
        let body = JSON.object()
        body.set("text", string: post.text)
        if let replyTo = post.replyTo {
            let reply = JSON.object()
            reply.set("in_reply_to_tweet_id", string: replyTo)
            body.set("reply", reply)
        }
        if let quote = post.quote { body.set("quote_tweet_id", string: quote) }
        if !post.mediaIDs.isEmpty {
            let media = JSON.object()
            media.set("media_ids", .array(strings: post.mediaIDs))
            body.set("media", media)
        }
        return body
    }

    /// The outcome of X's 2xx answer to a post: the created post, or
    /// `ambiguous` when the answer does not show it (it may exist).
    func created(_ answer: Answer, mediaIDs: [String]) -> Result<JSON, RecordError> {
        let created = legacy ? answer.json : answer.json?["data"]
        let id = legacy ? created?["id_str"]?.string : created?["id"]?.string
        // The id goes to the output and into the next post of a thread: digits, whoever sent it.
        guard let created, let id, Record.isID(id) else {
            return .failure(RecordError(.ambiguous, "HTTP \(answer.status) without the created post in its body; the post may exist",
                                        status: answer.status))
        }
        let result = JSON.object()
        result.set("id", string: id)
        result.set("text", string: created["text"]?.string ?? created["full_text"]?.string ?? "")
        if !mediaIDs.isEmpty { result.set("media_ids", .array(strings: mediaIDs)) }
        return .success(result)
    }
}

/// One post: checked, its files uploaded one after another, then the post
/// sent once.
final class PostJob: Job {
    let record: Record
    let reply: Reply
    private unowned let poster: TwitterPoster
    private var post: TwitterPoster.Post?
    private var authorizer: XAuthorizer?
    private var uploads: [XMediaUpload] = []
    /// The upload under way; `uploads.count` once the post is.
    private var current = 0
    private var uploaded: [String] = []
    /// In a dry run, the upload requests shown so far.
    private let shownUploads = JSON.array()
    /// What the record may cost, reserved with its first request; nil once reserved.
    private var unreserved: Money?

    init(record: Record, reply: Reply, poster: TwitterPoster) {
        self.record = record
        self.reply = reply
        self.poster = poster
    }

    var uploadSize: Int { uploads.reduce(0) { $0 + $1.media.file.size } }

    private var isUploading: Bool { current < uploads.count }

    func begin() -> JobStep {
        settled(starting())
    }

    /// The first step, or once begun (a post that held for its thread), the post.
    private func starting() -> JobStep {
        if post != nil { return postStep() }
        if poster.thread {
            // Only the next post of a thread uploads while the one before is made.
            // (A job without files that waited for its post is asked to begin again.)
            if let ahead = poster.uploadingAhead, ahead !== self { return .hold }
            if let brokenAt = poster.brokenAt {
                return .fail(RecordError(.cancelled, "an earlier post of the thread (line \(brokenAt)) failed"))
            }
            poster.uploadingAhead = self
        }
        do throws(RecordError) {
            let post = try poster.post(of: record)
            let authorizer = try poster.x.authorizer(for: record)
            try poster.checkPlan(post, poster.x.plan(of: authorizer))
            unreserved = poster.mostCost(of: post)
            self.post = post
            self.authorizer = authorizer
            uploads = post.media.map { XMediaUpload($0, x: poster.x, authorizer: authorizer) }
        } catch {
            return .fail(error)
        }
        if let first = uploads.first { return send(first.start(), after: 0) }
        return postStep()
    }

    /// The post itself, once every file is uploaded and (in a thread) the post before it is made.
    private func postStep() -> JobStep {
        if poster.thread {
            if let other = poster.threadInProgress, other !== self { return .hold }
            if let brokenAt = poster.brokenAt {
                return .fail(RecordError(.cancelled, "an earlier post of the thread (line \(brokenAt)) failed"))
            }
            poster.threadInProgress = self
            if poster.uploadingAhead === self { poster.uploadingAhead = nil }
        }
        guard var post, let authorizer else { return .fail(RecordError(.http, "internal error: a post without its record")) }
        post.mediaIDs += uploaded
        if poster.thread, let previousLine = poster.previousLine {
            post.replyTo = poster.previousID ?? (poster.dryRun ? "{id of line \(previousLine)}" : post.replyTo)
        }
        if poster.dryRun && poster.thread { poster.previousLine = record.line }
        return send(poster.request(for: post, authorizer: authorizer), after: 0)
    }

    /// Sends `spec`; the record's first request reserves what the record
    /// may cost, so that no file is uploaded for a post the budget cannot pay for.
    private func send(_ spec: RequestSpec, after seconds: Double) -> JobStep {
        var spec = spec
        if let total = unreserved {
            let own = spec.price?.most ?? .zero
            if spec.price == nil { spec.price = Price(each: .zero) }
            spec.price?.andLater = total - own
            unreserved = nil
        }
        return seconds > 0 ? .sendAfter(spec, seconds: seconds) : .send(spec)
    }

    /// After the current upload's step: its next one, the next file, or the post.
    private func proceed(_ next: XMediaUpload.Next) -> JobStep {
        switch next {
        case .send(let spec, let after):
            return send(spec, after: after)
        case .done(let id):
            uploaded.append(id)
            current += 1
            if isUploading { return send(uploads[current].start(), after: 0) }
            return postStep()
        }
    }

    func received(_ event: JobEvent) -> JobStep {
        switch event {
        case .answer(let answer): return settled(next(after: answer))
        case .refused(let error): return .fail(error)
        case .ending(let error): return settled(.fail(ending(with: error)))
        }
    }

    private func next(after answer: Answer) -> JobStep {
        if isUploading {
            switch uploads[current].next(after: answer) {
            case .success(let next): return proceed(next)
            case .failure(let error): return .fail(error)
            }
        }
        switch poster.created(answer, mediaIDs: (post?.mediaIDs ?? []) + uploaded) {
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

    func dryRun(_ description: JSON, of request: RequestSpec) -> JobStep {
        if isUploading {
            shownUploads.append(description)
            return settled(proceed(uploads[current].nextInDryRun()))
        }
        let result = JSON.object()
        result.set("request", description)
        if !uploads.isEmpty { result.set("uploads", shownUploads) }
        reply.succeed(result)
        return settled(.done)
    }

    private func ending(with error: RecordError) -> RecordError {
        if poster.thread && poster.brokenAt == nil { poster.brokenAt = record.line }
        var error = error
        // Which file's upload failed, when one did.
        if isUploading && error.kind != .cancelled { error.extras.append(("media", .string(uploads[current].media.file.name))) }
        return error
    }

    /// `step`, after letting the thread go on without this job when it is the last.
    private func settled(_ step: JobStep) -> JobStep {
        switch step {
        case .done, .fail: break
        default: return step
        }
        if poster.threadInProgress === self { poster.threadInProgress = nil }
        if poster.uploadingAhead === self { poster.uploadingAhead = nil }
        return step
    }
}
