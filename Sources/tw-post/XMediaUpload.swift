import Socialpipe
import SocialpipeX
import TwPostMedia
/// A picture or video on its way to X, checked before anything is sent
/// (x-api.md §8): its kind by its first bytes, the category it goes under,
/// and that category's size limit.
public struct XMediaFile {
    public let file: OpenFile
    public let kind: MediaKind
    public let category: String
    /// Alt text, set after the upload.
    public let alt: String?

    /// The categories a post's media may have, with their size limits.
    public static let limits: [(category: String, bytes: Int)] = [
        ("tweet_image", 5 << 20), ("tweet_gif", 15 << 20), ("tweet_video", 512 << 20), ("amplify_video", 512 << 20),
    ]

    /// The longest alt text X takes, in characters.
    public static let altTextLimit = 1000

    /// `category` (nil: the usual one for the kind) must fit the kind.
    public init(file: OpenFile, category: String?, alt: String?) throws(RecordError) {
        guard file.size > 0 else { throw RecordError(.validation, "\(file.name) is empty") }
        guard let kind = MediaKind.sniff(file.head(MediaKind.headLength)) else {
            throw RecordError(.validation, "\(file.name) is not a JPEG, PNG, GIF, WEBP, MP4 or MOV file (judged by its content)")
        }
        let fitting: [String]
        switch kind {
        case .jpeg, .png, .webp: fitting = ["tweet_image"]
        case .gif: fitting = ["tweet_gif", "tweet_image"]
        case .mp4, .quicktime: fitting = ["tweet_video", "amplify_video"]
        }
        let chosen = category ?? fitting[0]
        guard fitting.contains(chosen) else {
            throw RecordError(.validation, "\(file.name) is \(kind.mimeType), which X does not take as \(chosen) "
                              + "(it takes it as \(fitting.joined(separator: " or ")))")
        }
        let limit = Self.limits.first { $0.category == chosen }!.bytes
        guard file.size <= limit else {
            throw RecordError(.validation, "\(file.name) is \(file.size) bytes; X takes \(chosen) media up to \(limit) bytes "
                              + "(\(limit >> 20) MiB)")
        }
        self.file = file
        self.kind = kind
        self.category = chosen
        self.alt = alt
    }
}

/// One file's upload to X (x-api.md §8): a picture in one request, anything
/// else step by step (initialize, append its 4 MiB segments, finalize, ask
/// for the status while X processes it, after the wait X asks for); the file
/// is read as it is sent. Then its alt text. Every request may be sent again:
/// a media id nothing refers to expires.
public final class XMediaUpload {
    public let media: XMediaFile
    private let x: XSetup
    private let authorizer: XAuthorizer
    /// The id X gave, once initialized (in a dry run, a stand-in).
    public private(set) var mediaID: String?
    private var stage = Stage.initializing
    /// STATUS polls so far, and the seconds X asked to wait between them.
    private var polls = 0
    private var waited = 0.0

    /// How long X may keep a file processing, in waits and in polls, before
    /// the record gives up on it (a server that never finishes must not hold
    /// the run for ever).
    public static let longestProcessing = 1800.0
    public static let mostPolls = 1000

    private enum Stage: Equatable {
        case uploading, initializing, appending(segment: Int), finalizing, processing, describing, done
    }

    /// Bytes per appended segment (what xurl sends; X takes up to 5 MB).
    public static let segmentSize = 4 << 20

    /// What comes after an answer.
    public enum Next {
        /// This request, not before `after` seconds from now.
        case send(RequestSpec, after: Double)
        /// The file is uploaded, under this media id.
        case done(String)
    }

    public init(_ media: XMediaFile, x: XSetup, authorizer: XAuthorizer) {
        self.media = media
        self.x = x
        self.authorizer = authorizer
    }

    /// Whether the file goes in X's one-shot upload, `POST /2/media/upload`
    /// (https://docs.x.com/x-api/media/image-or-subtitle-media-upload): its
    /// `media_category` takes `tweet_image` but neither GIFs nor videos, and
    /// its `media_type` no `image/gif`, so a GIF, even as `tweet_image`, goes
    /// in steps. A `tweet_image` is at most 5 MiB, as the one-shot takes.
    public var isOneShot: Bool { media.category == "tweet_image" && media.kind != .gif }

    /// The first request: the one-shot upload, or initialize.
    public func start() -> RequestSpec {
        if isOneShot {
            stage = .uploading
            return multipart(x.apiBase + "/2/media/upload", endpoint: "POST /2/media/upload",
                             fields: [("media_category", media.category), ("media_type", media.kind.mimeType)],
                             offset: 0, count: media.file.size)
        }
        let body = JSON.object()
        body.set("media_type", string: media.kind.mimeType)
        body.set("total_bytes", .integer(Int64(media.file.size)))
        body.set("media_category", string: media.category)
        return step(.json("POST", x.apiBase + "/2/media/upload/initialize", body), endpoint: "POST /2/media/upload/initialize")
    }

    /// The next step once the last request succeeded with `answer`.
    public func next(after answer: Answer) -> Result<Next, RecordError> {
        switch stage {
        case .uploading, .initializing:
            guard let id = answer.json?["data"]?["id"]?.string, Record.isID(id) else {
                return .failure(unreadable(answer, stage == .uploading ? "upload" : "initialize"))
            }
            mediaID = id
            return stage == .uploading ? processed(answer) : .success(afterInitialize())
        case .appending(let segment):
            return .success(afterAppend(segment))
        case .finalizing, .processing:
            return processed(answer)
        case .describing, .done:
            return .success(.done(mediaID ?? ""))
        }
    }

    /// Once the whole file is with X (the answer to the one-shot upload, to
    /// finalize or to a status poll): the alt text or the end, or another
    /// poll while X processes the file.
    private func processed(_ answer: Answer) -> Result<Next, RecordError> {
        guard let processing = answer.json?["data"]?["processing_info"], !processing.isNull else {
            return .success(afterProcessing())
        }
        switch processing["state"]?.string {
        case "succeeded":
            return .success(afterProcessing())
        case "failed":
            let error = processing["error"]
            let reason = [error?["name"]?.string, error?["message"]?.string].compactMap { $0 }.joined(separator: ": ")
            var failure = RecordError(.validation, "X could not process \(media.file.name)"
                                      + (reason.isEmpty ? "" : ": \(reason)"), status: answer.status)
            failure.code = error?["code"]?.integer.map { String($0) } ?? error?["name"]?.string
            return .failure(failure)
        case "pending", "in_progress":
            stage = .processing
            let wait = min(max(processing["check_after_secs"]?.number ?? 1, 0), Self.longestProcessing)
            polls += 1
            waited += wait
            guard polls <= Self.mostPolls && waited <= Self.longestProcessing else {
                return .failure(RecordError(.http, "X was still processing \(media.file.name) after \(polls - 1) checks "
                                            + "over \(Int(waited - wait)) s; gave up", status: answer.status))
            }
            return .success(.send(status(), after: wait))
        default:
            return .failure(unreadable(answer, "processing"))
        }
    }

    /// In a dry run: the next step as if the last had gone well (no processing is shown).
    public func nextInDryRun() -> Next {
        switch stage {
        case .uploading:
            mediaID = "{media id of \(media.file.name)}"
            return afterProcessing()
        case .initializing:
            mediaID = "{media id of \(media.file.name)}"
            return afterInitialize()
        case .appending(let segment): return afterAppend(segment)
        case .finalizing, .processing: return afterProcessing()
        case .describing, .done: return .done(mediaID ?? "")
        }
    }

    private func afterInitialize() -> Next {
        stage = .appending(segment: 0)
        return .send(append(0), after: 0)
    }

    private func afterAppend(_ segment: Int) -> Next {
        if (segment + 1) * Self.segmentSize < media.file.size {
            stage = .appending(segment: segment + 1)
            return .send(append(segment + 1), after: 0)
        }
        stage = .finalizing
        let finalize = HTTPRequest(method: "POST", url: x.apiBase + "/2/media/upload/\(mediaID ?? "")/finalize",
                                   headers: HTTPRequest.acceptJSON, idempotent: true)
        return .send(step(finalize, endpoint: "POST /2/media/upload/:id/finalize"), after: 0)
    }

    private func afterProcessing() -> Next {
        guard let alt = media.alt else {
            stage = .done
            return .done(mediaID ?? "")
        }
        stage = .describing
        let text = JSON.object()
        text.set("text", string: alt)
        let altText = JSON.object()
        altText.set("alt_text", text)
        let body = JSON.object()
        body.set("id", string: mediaID ?? "")
        body.set("metadata", altText)
        var spec = step(.json("POST", x.apiBase + "/2/media/metadata", body), endpoint: "POST /2/media/metadata")
        spec.price = x.price(.mediaMetadata)
        return .send(spec, after: 0)
    }

    /// Segment `index` of the file.
    private func append(_ index: Int) -> RequestSpec {
        let offset = index * Self.segmentSize
        return multipart(x.apiBase + "/2/media/upload/\(mediaID ?? "")/append", endpoint: "POST /2/media/upload/:id/append",
                         fields: [("segment_index", String(index))], offset: offset,
                         count: min(Self.segmentSize, media.file.size - offset))
    }

    /// A multipart/form-data POST of the text `fields`, then a `media` part of
    /// `count` bytes of the file from `offset`, read from the file while it is sent.
    private func multipart(_ url: String, endpoint: String, fields: [(name: String, value: String)],
                           offset: Int, count: Int) -> RequestSpec {
        let boundary = "socialpipe-" + Crypto.hex(Crypto.randomBytes(16))
        var head = ""
        for field in fields {
            head += "--\(boundary)\r\nContent-Disposition: form-data; name=\"\(field.name)\"\r\n\r\n\(field.value)\r\n"
        }
        head += "--\(boundary)\r\nContent-Disposition: form-data; name=\"media\"; filename=\"blob\"\r\n"
            + "Content-Type: application/octet-stream\r\n\r\n"
        let tail = "\r\n--\(boundary)--\r\n"
        var request = HTTPRequest(method: "POST", url: url,
                                  headers: HTTPRequest.acceptJSON + ["Content-Type: multipart/form-data; boundary=\(boundary)"],
                                  idempotent: true)
        // A multipart body is not part of the OAuth 1.0a signature (RFC 5849 §3.4.1.3).
        request.streamedBody = StreamedBody(head: Array(head.utf8), file: media.file, offset: offset, count: count,
                                            tail: Array(tail.utf8))
        return step(request, endpoint: endpoint)
    }

    private func status() -> RequestSpec {
        step(.form("GET", x.apiBase + "/2/media/upload", [Parameter("command", "STATUS"), Parameter("media_id", mediaID ?? "")]),
             endpoint: "GET /2/media/upload")
    }

    /// An upload request: safe to send again, unlike the post it serves.
    private func step(_ request: HTTPRequest, endpoint: String) -> RequestSpec {
        var spec = x.request(request, endpoint: endpoint, authorizer: authorizer)
        spec.request.idempotent = true
        return spec
    }

    private func unreadable(_ answer: Answer, _ step: String) -> RecordError {
        RecordError(.http, "X's answer to the \(step) of \(media.file.name) could not be read", status: answer.status)
    }
}
