import CCurl
import Glibc

/// One HTTP request as a tool builds it.
public struct HTTPRequest: Sendable {
    public var method: String
    public var url: String
    /// `Name: value` lines.
    public var headers: [String]
    public var body: [UInt8]?
    /// Whether sending it twice is harmless (GET); a POST is not.
    public var idempotent: Bool
    /// Requests sharing a key share rate-limit state (endpoint and credentials).
    public var rateLimitKey: String
    /// Header names whose values are secret in logs and dry runs.
    public var secretHeaders: Set<String> = ["authorization"]

    public init(method: String, url: String, headers: [String] = [], body: [UInt8]? = nil,
                idempotent: Bool, rateLimitKey: String) {
        self.method = method
        self.url = url
        self.headers = headers
        self.body = body
        self.idempotent = idempotent
        self.rateLimitKey = rateLimitKey
    }
}

/// A complete HTTP response.
public struct HTTPResponse: Sendable {
    public let status: Int
    /// Header fields in order received, names lower-cased.
    public let headers: [(name: String, value: String)]
    public let body: [UInt8]

    /// The last value of header `name` (lower-case).
    public func header(_ name: String) -> String? {
        headers.last { $0.name == name }?.value
    }

    /// The body parsed as JSON, if it is.
    public var json: JSON? {
        body.withUnsafeBufferPointer { bytes -> JSON? in
            guard case .success(let value) = JSON.parse(bytes) else { return nil }
            return value
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
}

/// One libcurl easy handle carrying one request; found again through CURLOPT_PRIVATE.
final class HTTPTransfer {
    let request: HTTPRequest
    let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var body: [UInt8] = []
    private var headers: [(name: String, value: String)] = []
    private var requestBody: [UInt8]
    private var tooLarge = false
    /// libcurl's own account of a failure (CURLOPT_ERRORBUFFER): it says
    /// which certificate check failed where the error code only says one did.
    private let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    let started = Clock.monotonic()

    /// Responses larger than this are refused rather than held in memory.
    static let maximumBody = 64 << 20

    init?(request: HTTPRequest, timeout: Double, caFile: String?, userAgent: String) {
        guard let handle = sp_easy_init() else { return nil }
        self.request = request
        self.handle = handle
        requestBody = request.body ?? []

        errorText[0] = 0
        sp_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorText)
        sp_easy_setopt_string(handle, CURLOPT_URL, request.url)
        sp_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        sp_easy_setopt_long(handle, CURLOPT_TIMEOUT_MS, Int(timeout * 1000))
        sp_easy_setopt_long(handle, CURLOPT_CONNECTTIMEOUT_MS, Int(min(timeout, 30) * 1000))
        sp_easy_setopt_string(handle, CURLOPT_ACCEPT_ENCODING, "")
        sp_easy_setopt_long(handle, CURLOPT_HTTP_VERSION, Int(CURL_HTTP_VERSION_2TLS))
        sp_easy_setopt_string(handle, CURLOPT_USERAGENT, userAgent)
        sp_easy_setopt_string(handle, CURLOPT_PROTOCOLS_STR, "http,https")
        if let caFile { sp_easy_setopt_string(handle, CURLOPT_CAINFO, caFile) }

        switch request.method {
        case "GET":
            sp_easy_setopt_long(handle, CURLOPT_HTTPGET, 1)
        case "HEAD":
            sp_easy_setopt_long(handle, CURLOPT_NOBODY, 1)
        default:
            sp_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
        }
        let context = Unmanaged.passUnretained(self).toOpaque()
        if request.body != nil {
            sp_easy_setopt_long(handle, CURLOPT_POST, 1)
            sp_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
            sp_easy_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(requestBody.count))
            // The body is handed out by a read callback, not POSTFIELDS: when a
            // reused connection dies, libcurl 7.88 sends the request again by
            // itself, rewinding the body first. The seek callback refuses that
            // rewind once the body has gone out, so the transfer fails instead
            // and a post that may have been applied is never sent twice.
            sp_easy_setopt_pointer(handle, CURLOPT_READDATA, context)
            sp_easy_setopt_read_callback(handle, CURLOPT_READFUNCTION) { buffer, size, count, context in
                guard let buffer, let context else { return 0 }
                let transfer = Unmanaged<HTTPTransfer>.fromOpaque(context).takeUnretainedValue()
                return transfer.sendBody(UnsafeMutableRawPointer(buffer).assumingMemoryBound(to: UInt8.self), size * count)
            }
            sp_easy_setopt_pointer(handle, CURLOPT_SEEKDATA, context)
            sp_easy_setopt_seek_callback(handle, CURLOPT_SEEKFUNCTION) { context, offset, origin in
                guard let context else { return CURL_SEEKFUNC_FAIL }
                let transfer = Unmanaged<HTTPTransfer>.fromOpaque(context).takeUnretainedValue()
                return transfer.rewindBody(to: Int(offset), origin: origin)
            }
        } else if !request.idempotent {
            // Without a body there is nothing to refuse to rewind; a fresh
            // connection keeps libcurl from re-sending on a dead one.
            sp_easy_setopt_long(handle, CURLOPT_FRESH_CONNECT, 1)
        }
        // Expect: 100-continue would cost a round trip per post.
        for line in request.headers + ["Expect:"] { headerList = sp_slist_append(headerList, line) }
        sp_easy_setopt_slist(handle, CURLOPT_HTTPHEADER, headerList)

        sp_easy_setopt_pointer(handle, CURLOPT_PRIVATE, context)
        sp_easy_setopt_pointer(handle, CURLOPT_WRITEDATA, context)
        sp_easy_setopt_pointer(handle, CURLOPT_HEADERDATA, context)
        sp_easy_setopt_write_callback(handle, CURLOPT_WRITEFUNCTION) { data, size, count, context in
            guard let data, let context else { return 0 }
            let transfer = Unmanaged<HTTPTransfer>.fromOpaque(context).takeUnretainedValue()
            return transfer.receiveBody(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), size * count)
        }
        sp_easy_setopt_write_callback(handle, CURLOPT_HEADERFUNCTION) { data, size, count, context in
            guard let data, let context else { return 0 }
            let transfer = Unmanaged<HTTPTransfer>.fromOpaque(context).takeUnretainedValue()
            transfer.receiveHeader(UnsafeRawPointer(data).assumingMemoryBound(to: UInt8.self), size * count)
            return size * count
        }
    }

    deinit {
        sp_easy_cleanup(handle)
        sp_slist_free_all(headerList)
        errorText.deallocate()
    }

    /// Bytes of the request body handed to libcurl so far.
    private var bodySent = 0
    /// Set when libcurl wanted to send the body again and was refused.
    private var resendRefused = false

    private func sendBody(_ buffer: UnsafeMutablePointer<UInt8>, _ room: Int) -> Int {
        let count = min(room, requestBody.count - bodySent)
        guard count > 0 else { return 0 }
        requestBody.withUnsafeBufferPointer { bytes in
            if let base = bytes.baseAddress { buffer.update(from: base + bodySent, count: count) }
        }
        bodySent += count
        return count
    }

    private func rewindBody(to offset: Int, origin: Int32) -> Int32 {
        // Rewinding before anything went out changes nothing; afterwards it
        // would send the body a second time, which only an idempotent request may.
        if origin == SEEK_SET && offset == 0 && (bodySent == 0 || request.idempotent) {
            bodySent = 0
            return CURL_SEEKFUNC_OK
        }
        resendRefused = true
        return CURL_SEEKFUNC_FAIL
    }

    private func receiveBody(_ data: UnsafePointer<UInt8>, _ count: Int) -> Int {
        if body.count + count > Self.maximumBody {
            tooLarge = true
            return 0
        }
        body.append(contentsOf: UnsafeBufferPointer(start: data, count: count))
        return count
    }

    /// One header line as libcurl hands it over, `\r\n` included. Parsed as
    /// bytes: in Swift `"\r\n"` is a single Character, which trimming by
    /// Character would never match.
    private func receiveHeader(_ data: UnsafePointer<UInt8>, _ count: Int) {
        var line = UnsafeBufferPointer(start: data, count: count)[...]
        while let last = line.last, last == 0x0D || last == 0x0A || last == 0x20 || last == 0x09 { line = line.dropLast() }
        if line.starts(with: "HTTP/".utf8) {
            // A new response (after a 100 Continue or a redirect) starts over.
            headers.removeAll()
            return
        }
        guard let colon = line.firstIndex(of: 0x3A) else { return }
        var value = line[(colon + 1)...]
        while let first = value.first, first == 0x20 || first == 0x09 { value = value.dropFirst() }
        let name = String(decoding: line[..<colon], as: UTF8.self).lowercased()
        headers.append((name, String(decoding: value, as: UTF8.self)))
    }

    /// The outcome once libcurl reports the transfer done with `code`.
    func outcome(_ code: CURLcode) -> TransferOutcome {
        var status = 0
        sp_easy_getinfo_long(handle, CURLINFO_RESPONSE_CODE, &status)
        if code == CURLE_OK {
            return .response(HTTPResponse(status: status, headers: headers, body: body))
        }
        let message: String
        if tooLarge {
            message = "response larger than \(Self.maximumBody) bytes"
        } else if resendRefused {
            message = "connection lost before an answer"
        } else if errorText[0] != 0 {
            message = String(cString: errorText)
        } else if let text = sp_easy_strerror(code) {
            message = String(cString: text)
        } else {
            message = "transfer failed (curl \(code.rawValue))"
        }
        let lasting = [CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_PEER_FAILED_VERIFICATION,
                       CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND,
                       CURLE_NOT_BUILT_IN].contains(code)
        let sent = resendRefused || (requestReachedOrigin(code) && requestBytesSent > 0)
        return .failure(message: message, requestSent: sent, lasting: lasting, status: sent && status > 0 ? status : nil)
    }

    /// Request bytes libcurl counts as sent, a proxy's CONNECT included.
    private var requestBytesSent: Int {
        var size = 0
        sp_easy_getinfo_long(handle, CURLINFO_REQUEST_SIZE, &size)
        return size
    }

    /// Whether the request may have reached the origin server: false only
    /// when the failure proves it did not. A proxy that refused the tunnel,
    /// a failure of name lookup, connection or TLS handshake, or a fresh TLS
    /// connection whose handshake never completed, all stop before the
    /// request is written; anything else is taken as sent.
    private func requestReachedOrigin(_ code: CURLcode) -> Bool {
        var tunnelStatus = 0
        sp_easy_getinfo_long(handle, CURLINFO_HTTP_CONNECTCODE, &tunnelStatus)
        if tunnelStatus != 0 && !(200...299).contains(tunnelStatus) { return false }
        let beforeRequest = [CURLE_COULDNT_RESOLVE_PROXY, CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_CONNECT,
                             CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE,
                             CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER, CURLE_SSL_ENGINE_NOTFOUND, CURLE_PROXY,
                             CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_NOT_BUILT_IN]
        if beforeRequest.contains(code) { return false }
        var newConnections = 0
        sp_easy_getinfo_long(handle, CURLINFO_NUM_CONNECTS, &newConnections)
        var handshakeDone: curl_off_t = 0
        sp_easy_getinfo_offset(handle, CURLINFO_APPCONNECT_TIME_T, &handshakeDone)
        // A reused connection reports no handshake time, so only a new one proves anything.
        if newConnections > 0 && request.url.hasPrefix("https:") && handshakeDone == 0 { return false }
        return true
    }
}
