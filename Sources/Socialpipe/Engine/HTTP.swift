import CLinux
import Glibc

/// A request as a tool asks for it: what to send (`request`), how to sign
/// each attempt, which API answers it, and whether it may be shared or batched.
public struct RequestSpec {
    /// What is sent, before each attempt adds its authorization.
    public var request: HTTPRequest
    /// Requests sharing a key share rate-limit state (endpoint and credentials).
    public var rateLimitKey: String
    /// The API: how its answers are classified and its limits read.
    public var service: APIService
    /// Signs each attempt afresh (a new nonce and timestamp each time).
    public var authorizer: RequestAuthorizer?
    /// Requests with the same key are sent once for every job that asks
    /// (while in flight, and for the whole run when `keepAnswer`).
    public var sharing: Sharing?
    /// Requests with the same key may travel together (see `Batching`).
    public var batchKey: String?
    /// Whether a successful answer is JSON: one that is not (cut short,
    /// garbled) is read as the server failing. False for the few endpoints
    /// that answer in a form (OAuth 1.0a's token steps).
    public var answersWithJSON = true
    /// What it costs, when its API prices it (see `Spending`).
    public var price: Price?

    public init(_ request: HTTPRequest, rateLimitKey: String, service: APIService, authorizer: RequestAuthorizer? = nil) {
        self.request = request
        self.rateLimitKey = rateLimitKey
        self.service = service
        self.authorizer = authorizer
    }

    /// A request made of `HTTPRequest`'s parts.
    public init(method: String, url: String, headers: [String] = [], body: [UInt8]? = nil, idempotent: Bool,
                rateLimitKey: String, service: APIService, authorizer: RequestAuthorizer? = nil) {
        self.init(HTTPRequest(method: method, url: url, headers: headers, body: body, idempotent: idempotent),
                  rateLimitKey: rateLimitKey, service: service, authorizer: authorizer)
    }

    /// When one request serves several jobs.
    public struct Sharing: Sendable {
        public var key: String
        /// Keep the answer for later jobs of the run, not only those asking while it is in flight.
        public var keepAnswer: Bool
        public init(key: String, keepAnswer: Bool) {
            self.key = key
            self.keepAnswer = keepAnswer
        }
    }
}

/// Signs a request, once per attempt.
public protocol RequestAuthorizer {
    /// Adds what authorizes `request` (a header, a query parameter).
    func authorize(_ request: inout HTTPRequest) throws(RecordError)
    /// Values never to be shown wherever they appear in a request (a dry
    /// run's description): the tokens and secrets this authorizer holds or
    /// that the request carries in its body.
    var secretValues: [String] { get }
    /// A request to be answered before this authorizer can sign (a token
    /// about to expire, refreshed), or nil; the engine sends it once for
    /// every request waiting on it (see `CredentialPrerequisite`).
    func prerequisite() throws(RecordError) -> CredentialPrerequisite?
    /// Whether `request`, refused with `error`, goes again once (after the
    /// prerequisite this then asks for): a token refused with a 401 is renewed.
    func renews(after error: RecordError, of request: HTTPRequest) -> Bool
    /// What fixes `error` (an `auth` or `permission` answer to `request`):
    /// the command to run, which the message then ends with (after `; `); nil for nothing to add.
    func remedy(for error: RecordError, of request: HTTPRequest) -> String?
}

extension RequestAuthorizer {
    public var secretValues: [String] { [] }
    public func remedy(for error: RecordError, of request: HTTPRequest) -> String? { nil }
    public func prerequisite() throws(RecordError) -> CredentialPrerequisite? { nil }
    public func renews(after error: RecordError, of request: HTTPRequest) -> Bool { false }
}

/// Adds nothing; names the secrets a request carries in its headers or
/// body (a client secret in a form), so that `-v` and dry runs hide them.
public struct SecretsOf: RequestAuthorizer {
    public let values: [String]
    public init(_ values: [String]) { self.values = values }
    public func authorize(_ request: inout HTTPRequest) throws(RecordError) {}
    public var secretValues: [String] { values }
}

/// One HTTP request as it is sent.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    /// `Name: value` lines.
    public var headers: [String]
    public var body: [UInt8]?
    /// A body read from a file as it is sent, instead of `body`.
    public var streamedBody: StreamedBody?
    /// Whether sending it twice is harmless (GET, or a step of an upload
    /// that nothing refers to yet); a post is not.
    public var idempotent: Bool

    public init(method: String, url: String, headers: [String] = [], body: [UInt8]? = nil, idempotent: Bool) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.idempotent = idempotent
    }

    /// The headers of a request that wants its answer in JSON, as every API
    /// the tools speak gives it.
    public static let acceptJSON = ["Accept: application/json"]

    /// `method` to `url` sending `json`: `headers`, then its Content-Type.
    /// Only a GET is idempotent.
    public static func json(_ method: String, _ url: String, _ json: JSON, headers: [String] = acceptJSON) -> HTTPRequest {
        HTTPRequest(method: method, url: url, headers: Self.headers(headers, then: "Content-Type: application/json"),
                    body: Array(json.dumped().utf8), idempotent: method == "GET")
    }

    /// `method` to `url` with the parameters `form`, percent-encoded: a GET
    /// carries them in its query, any other method as its body, with its
    /// Content-Type after `headers`. Nil sends no body at all (an empty form
    /// is an empty body). Only a GET is idempotent.
    public static func form(_ method: String, _ url: String, _ form: [Parameter]? = nil,
                            headers: [String] = acceptJSON) -> HTTPRequest {
        var request = HTTPRequest(method: method, url: url, headers: headers, idempotent: method == "GET")
        guard let form else { return request }
        if method != "GET" {
            request.headers = Self.headers(headers, then: "Content-Type: application/x-www-form-urlencoded")
            request.body = PercentEncoding.formEncoded(form)
        } else if !form.isEmpty {
            request.url += (url.utf8.contains(0x3F) ? "&" : "?") + String(decoding: PercentEncoding.formEncoded(form), as: UTF8.self)
        }
        return request
    }

    /// The request as a dry run shows it (`RequestDescription.describe`): a
    /// streamed body by the stretch of its file, not the bytes.
    func described(hiding secrets: [String] = [], parameters: Set<String> = []) -> JSON {
        RequestDescription.describe(method: method, url: url, headers: headers,
                                    body: streamedBody?.described ?? body.map(UTF8Validation.repaired), hiding: secrets,
                                    parameters: parameters)
    }

    /// `headers`, then `contentType`, with room for one more: a caller that
    /// wants its Accept after the Content-Type (tw-post's posts) appends it.
    private static func headers(_ headers: [String], then contentType: String) -> [String] {
        var all: [String] = []
        all.reserveCapacity(headers.count + 2)
        all.append(contentsOf: headers)
        all.append(contentType)
        return all
    }
}

/// A file a request body is read from while it is sent (tw-post's media).
public protocol BodyFile: AnyObject, Sendable {
    /// The name shown for it in a dry run.
    var name: String { get }
    /// Reads up to `count` bytes at `offset` into `buffer`: the count read
    /// (0 at the end of the file), or -1 when the file cannot be read.
    func read(at offset: Int, into buffer: UnsafeMutableRawPointer, count: Int) -> Int
}

/// A body that is partly a stretch of a file, read while libcurl sends it
/// (a segment of a media upload): `head`, `count` bytes of `file` from
/// `offset`, then `tail`. Memory does not grow with the file.
public struct StreamedBody: Sendable {
    public let head: [UInt8]
    public let file: any BodyFile
    public let offset: Int
    public let count: Int
    public let tail: [UInt8]

    public init(head: [UInt8], file: any BodyFile, offset: Int, count: Int, tail: [UInt8]) {
        self.head = head
        self.file = file
        self.offset = offset
        self.count = count
        self.tail = tail
    }

    /// Its length in bytes.
    public var length: Int { head.count + count + tail.count }

    /// Copies the body's bytes from `position` into `buffer`, at most `room`
    /// of them: the number copied, or nil when the file could not be read
    /// (it was cut short meanwhile).
    func copy(from position: Int, into buffer: UnsafeMutablePointer<UInt8>, room: Int) -> Int? {
        var copied = 0
        var position = position
        func take(_ bytes: [UInt8], startingAt start: Int) {
            guard position >= start, position < start + bytes.count, copied < room else { return }
            let count = min(room - copied, start + bytes.count - position)
            bytes.withUnsafeBufferPointer { buffer.advanced(by: copied).update(from: $0.baseAddress! + (position - start), count: count) }
            copied += count
            position += count
        }
        take(head, startingAt: 0)
        let fileStart = head.count
        while copied < room && position >= fileStart && position < fileStart + count {
            let wanted = min(room - copied, fileStart + count - position)
            let got = file.read(at: offset + position - fileStart, into: buffer.advanced(by: copied), count: wanted)
            guard got > 0 else { return nil }
            copied += got
            position += got
        }
        take(tail, startingAt: fileStart + count)
        return copied
    }

    /// The body as a dry run shows it: the file's bytes named, not shown.
    public var described: String {
        UTF8Validation.repaired(head) + "[\(count) bytes of \(file.name) from byte \(offset)]" + UTF8Validation.repaired(tail)
    }
}

/// A complete HTTP response.
public struct HTTPResponse: Sendable {
    public let status: Int
    /// Header fields in order received, names lower-cased.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    public init(status: Int, headers: [(name: String, value: String)], body: [UInt8]) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// The last value of header `name` (lower-case).
    public func header(_ name: String) -> String? {
        headers.last { $0.name == name }?.value
    }

    /// The wait `Retry-After` asks for, in seconds from `now`: delay-seconds
    /// or an HTTP-date (RFC 9110 §10.2.3); nil when absent or unreadable.
    /// It may be as large as +infinity, a wait no run makes.
    public func retryAfter(now: Double) -> Double? {
        guard let value = header("retry-after") else { return nil }
        if let seconds = Clock.seconds(value) { return seconds }
        return Clock.epoch(httpDate: value).map { max(0, Double($0) - now) }
    }
}

/// A response's body, parsed at most once and only when something reads it:
/// as jansson values (`json`), or checked and read in place (`raw`), which
/// is what a page of a thousand accounts wants.
public final class ResponseBody {
    public let bytes: [UInt8]
    private var parsed: JSON??
    private var checked: RawJSON??

    public init(_ bytes: [UInt8]) {
        self.bytes = bytes
    }

    /// The body as JSON values, when it is JSON.
    public var json: JSON? {
        if let parsed { return parsed }
        let value = bytes.withUnsafeBufferPointer { text -> JSON? in
            guard !text.isEmpty, case .success(let value) = JSON.parse(text) else { return nil }
            return value
        }
        parsed = .some(value)
        return value
    }

    /// The body checked as JSON text, to read in place, when it is JSON.
    public var raw: RawJSON? {
        if let checked { return checked }
        let value = RawJSON(bytes)
        checked = .some(value)
        return value
    }

    /// The elements of the object answer's top-level list `name` (none when
    /// it is absent or no list), as the check of the body noted them: a
    /// page's price counts them, its job writes them.
    public func elements(of name: StaticString) -> [Range<Int>] {
        guard let raw, raw.isObject(raw.root), let list = raw.member(name, of: raw.root), raw.isArray(list) else { return [] }
        return raw.elements(of: list)
    }

    /// Whether the body is one JSON value; an empty body counts as one when `emptyAllowed`.
    public func isJSON(emptyAllowed: Bool) -> Bool {
        bytes.isEmpty ? emptyAllowed : raw != nil
    }

    /// The string member `key` of an object answer, read in place: found
    /// even in an answer jansson refuses for a number it cannot hold
    /// (`"expires_in": 1e400`), so that no token is lost to one.
    public func string(_ key: StaticString) -> String? {
        guard let raw else { return nil }
        return raw.member(key, of: raw.root).flatMap(raw.string)
    }

    /// The number member `key` of an object answer, read in place, of any size.
    public func number(_ key: StaticString) -> Double? {
        guard let raw else { return nil }
        return raw.member(key, of: raw.root).flatMap(raw.number)
    }

    /// Whether the body holds `text` anywhere (a cheap look before a parse).
    public func contains(_ text: StaticString) -> Bool {
        bytes.withUnsafeBufferPointer { haystack in
            guard let base = haystack.baseAddress else { return text.utf8CodeUnitCount == 0 }
            return sp_memmem(base, haystack.count, text.utf8Start, text.utf8CodeUnitCount) != nil
        }
    }
}

/// How a transfer ended.
public enum TransferOutcome: Sendable {
    case response(HTTPResponse)
    /// No usable response. `requestSent` tells whether the server may have
    /// received (and applied) the request; `lasting` failures (a certificate
    /// that does not verify, a malformed URL) would fail the same way again.
    case failure(message: String, requestSent: Bool, lasting: Bool, status: Int?)
    /// The answer (with `status`) was longer than `limit` bytes and was not
    /// read to its end. Final: asked again, it would be as long again.
    case tooLarge(status: Int, limit: Int)
}

/// What an API's answers mean: each service has one, shared by its tools;
/// the engine itself never names a service.
public protocol APIService: AnyObject {
    /// Reads the rate-limit headers of `response` into `state`.
    func readRateLimits(_ response: HTTPResponse, into state: inout RateLimitState)
    /// What `response` means; its body is parsed only if the service reads it.
    func classify(_ response: HTTPResponse, body: ResponseBody) -> ResponseClass
    /// What `--verbose` adds to a response's line (such as the API version served).
    func verboseDetail(_ response: HTTPResponse) -> String?
    /// Query parameters of its requests whose values `-v` and dry runs hide
    /// though their names do not say secret (a proof made from a secret).
    var secretParameters: Set<String> { get }
    /// Where the API is and who said so, for a request that could not reach
    /// it: `http://127.0.0.1:1, from $VARIABLE`; nil when not known.
    var baseDescription: String? { get }
}

extension APIService {
    public func verboseDetail(_ response: HTTPResponse) -> String? { nil }
    public var baseDescription: String? { nil }
    public var secretParameters: Set<String> { [] }
}

/// An API's verdict on a response.
public enum ResponseClass {
    /// For the job to read.
    case success
    /// Final: the record fails with this error.
    case failure(RecordError)
    /// The server failed (5xx): an idempotent request is sent again; a
    /// post may have been applied and ends `ambiguous`.
    case transient(RecordError)
    /// Throttled: the request was not applied. `capped` when waiting for the
    /// window's reset does not help (a usage cap).
    case rateLimited(RecordError, capped: Bool)
    /// The credentials are throttled as a whole: the request was not
    /// applied; the engine waits as the rate-limit state says, else backs
    /// off, and once it gives up, later requests on the same credentials
    /// fail without being sent.
    case throttled(RecordError)

    /// The error the API answered with; nil for a success.
    public var error: RecordError? {
        switch self {
        case .success: return nil
        case .failure(let error), .transient(let error), .rateLimited(let error, _), .throttled(let error): return error
        }
    }
}

/// Gathers several jobs' requests into one and splits its answer (an API's
/// batch request): the hook fb-feed uses. A batch goes out when it is full, when
/// input pauses, or at its end.
public protocol Batching: AnyObject {
    /// The most requests one batch carries.
    var maximumBatch: Int { get }
    /// One request carrying `requests`, which share a `batchKey`.
    func combine(_ requests: [RequestSpec]) -> RequestSpec
    /// The part of a successful batch answer for each of the `count`
    /// combined requests, in order; nil when the answer cannot be read.
    func split(_ answer: Answer, count: Int) -> [BatchSlot]?
}

/// One combined request's part of a batch answer.
public enum BatchSlot {
    /// Its own response, judged by its service like any other.
    case response(HTTPResponse)
    /// The API did not complete it (a `null` slot): nothing was applied,
    /// and it may be sent once more.
    case notCompleted
}
