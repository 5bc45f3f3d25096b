import CCurl
import CLinux
import Glibc

/// One libcurl easy handle carrying one request; found again through CURLOPT_PRIVATE.
final class HTTPTransfer {
    let request: HTTPRequest
    /// The engine's number for it.
    let id: Int
    let handle: UnsafeMutableRawPointer
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var body: [UInt8] = []
    private var headers: [(name: String, value: String)] = []
    private var requestBody: [UInt8]
    /// Set when the file of a streamed body could not be read.
    private var fileUnreadable = false
    private var tooLarge = false
    /// libcurl's own account of a failure (CURLOPT_ERRORBUFFER): it says
    /// which certificate check failed where the error code only says one did.
    private let errorText = UnsafeMutablePointer<CChar>.allocate(capacity: Int(CURL_ERROR_SIZE))
    let started = Clock.monotonic()

    /// Answers larger than this are refused rather than held in memory, and
    /// the record fails (`TransferOutcome.tooLarge`). The largest answers
    /// read are pages of a list: a thousand accounts with every field come to
    /// about half a megabyte from the sandbox, a few megabytes at most from a real API.
    static let maximumBody = 16 << 20

    init?(request: HTTPRequest, id: Int, timeout: Double, caFile: String?, userAgent: String) {
        guard let handle = sp_easy_init() else { return nil }
        self.request = request
        self.id = id
        self.handle = handle
        requestBody = request.body ?? []

        errorText[0] = 0
        sp_easy_setopt_pointer(handle, CURLOPT_ERRORBUFFER, errorText)
        sp_easy_setopt_string(handle, CURLOPT_URL, request.url)
        sp_easy_setopt_long(handle, CURLOPT_NOSIGNAL, 1)
        // A page of a thousand accounts (85 KB) in two reads rather than six of 16 KiB.
        sp_easy_setopt_long(handle, CURLOPT_BUFFERSIZE, 65536)
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
        if request.body != nil || request.streamedBody != nil {
            sp_easy_setopt_long(handle, CURLOPT_POST, 1)
            sp_easy_setopt_string(handle, CURLOPT_CUSTOMREQUEST, request.method)
            sp_easy_setopt_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bodyLength))
            // The body is handed out by a read callback, not POSTFIELDS: when a
            // reused connection dies, libcurl 7.88 sends the request again by
            // itself, rewinding the body first. The seek callback refuses that
            // rewind once the body has gone out, so the transfer fails instead:
            // a post that may have been applied is never sent twice, and any
            // other request goes again through the engine, signed afresh (a
            // server refuses an OAuth 1.0a nonce it has seen, RFC 5849 §3.3).
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
        // libcurl also sends a request again by itself, body or none, when a
        // reused connection dies before the answer: the same signature (its
        // nonce already seen, if the server got that far) and, for a post,
        // a second post. The transfer fails instead; the engine decides.
        sp_easy_setopt_pointer(handle, CURLOPT_PREREQDATA, context)
        sp_easy_setopt_prereq_callback(handle, CURLOPT_PREREQFUNCTION) { context, _, _, _, _ in
            guard let context else { return CURL_PREREQFUNC_ABORT }
            return Unmanaged<HTTPTransfer>.fromOpaque(context).takeUnretainedValue().startingRequest()
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

    /// The request body's length.
    private var bodyLength: Int { request.streamedBody?.length ?? requestBody.count }

    /// Bytes of the request body sent so far, for the progress line.
    var bodyBytesSent: Int {
        var sent: curl_off_t = 0
        sp_easy_getinfo_offset(handle, CURLINFO_SIZE_UPLOAD_T, &sent)
        return Int(sent)
    }

    private func sendBody(_ buffer: UnsafeMutablePointer<UInt8>, _ room: Int) -> Int {
        if let streamed = request.streamedBody {
            // Read from the file as it goes out: only libcurl's buffer is held.
            guard let count = streamed.copy(from: bodySent, into: buffer, room: room) else {
                fileUnreadable = true
                return Int(CURL_READFUNC_ABORT)
            }
            bodySent += count
            return count
        }
        let count = min(room, requestBody.count - bodySent)
        guard count > 0 else { return 0 }
        requestBody.withUnsafeBufferPointer { bytes in
            if let base = bytes.baseAddress { buffer.update(from: base + bodySent, count: count) }
        }
        bodySent += count
        return count
    }

    /// Requests libcurl has started for this transfer.
    private var requestsStarted = 0

    /// Called as libcurl is about to send the request on a connection: a
    /// second time is its own retry, which is refused.
    private func startingRequest() -> Int32 {
        requestsStarted += 1
        guard requestsStarted == 1 else {
            resendRefused = true
            return CURL_PREREQFUNC_ABORT
        }
        return CURL_PREREQFUNC_OK
    }

    private func rewindBody(to offset: Int, origin: Int32) -> Int32 {
        // Rewinding before anything went out changes nothing; afterwards it
        // would send the same signed request a second time.
        if origin == SEEK_SET && offset == 0 && bodySent == 0 {
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
        if body.isEmpty {
            // Room for the whole body at once when its length is known, rather
            // than a copy at every doubling of a large one.
            var length: curl_off_t = -1
            sp_easy_getinfo_offset(handle, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length)
            if length > 0 { body.reserveCapacity(min(Int(length), Self.maximumBody)) }
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
        if tooLarge { return .tooLarge(status: status, limit: Self.maximumBody) }
        let message: String
        if fileUnreadable, let name = request.streamedBody?.file.name {
            message = "\(name) could not be read while it was sent (was it changed?)"
        } else if resendRefused {
            message = "connection lost before an answer"
        } else if errorText[0] != 0 {
            message = String(cString: errorText)
        } else if let text = sp_easy_strerror(code) {
            message = String(cString: text)
        } else {
            message = "transfer failed (curl \(code.rawValue))"
        }
        let lasting = fileUnreadable || [CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_PEER_FAILED_VERIFICATION,
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

/// The transport of the engine: libcurl's multi interface, one easy handle
/// per request, every socket in one wait with the loop's own descriptors.
final class CurlTransport: Transport {
    private let multi: UnsafeMutableRawPointer
    private let timeout: Double
    private let caFile: String?
    private let userAgent: String
    private var transfers: [Int: HTTPTransfer] = [:]
    /// Transfers that ended, their easy handles cleaned up when the loop next
    /// waits rather than between an answer and the request it lets go.
    private var ended: [HTTPTransfer] = []

    /// Free bytes at the heap's top kept for the next answers rather than given back.
    static let heapKept: Int32 = 4 << 20

    /// Fails when the tool was built without libcurl: the shim's references
    /// to it are weak (so that oauth-sign need not load it), and a tool that
    /// forgot to link it would otherwise crash at the first call.
    init(parallel: Int, timeout: Double, caFile: String?, userAgent: String) throws(StartupError) {
        guard sp_curl_linked() != 0 else {
            throw .configuration("internal error: this tool was built without libcurl (link it in Package.swift)")
        }
        // A page's answer, its outline and its lines are freed as the next
        // page's arrive. glibc would give that room back to the kernel after
        // each page (the heap's top trimmed past 128 KiB free, an answer past
        // 128 KiB mapped and unmapped) and fault it in again for the next:
        // two brk calls a page, and a thousand page faults over 200 pages. The
        // heap keeps it instead, up to a few pages' worth; an answer as large
        // as any accepted still comes from it.
        sp_set_heap_thresholds(Int32(HTTPTransfer.maximumBody), Self.heapKept)
        sp_global_init(Int(CURL_GLOBAL_DEFAULT))
        guard let multi = sp_multi_init() else {
            sp_global_cleanup()
            throw .configuration("libcurl could not start")
        }
        self.multi = multi
        self.timeout = timeout
        self.caFile = caFile
        self.userAgent = userAgent
        sp_multi_setopt_long(multi, CURLMOPT_PIPELINING, Int(CURLPIPE_MULTIPLEX))
        sp_multi_setopt_long(multi, CURLMOPT_MAX_HOST_CONNECTIONS, parallel)
    }

    /// Gives back everything libcurl holds (its connections, TLS sessions
    /// and caches, which LeakSanitizer would otherwise report at exit):
    /// transfers still in flight are taken out of the multi handle first, as
    /// libcurl asks. Runs when the run's engine goes away, before `exit`.
    deinit {
        for transfer in transfers.values { sp_multi_remove_handle(multi, transfer.handle) }
        transfers.removeAll()
        ended.removeAll()
        sp_multi_cleanup(multi)
        sp_global_cleanup()
    }

    func start(_ request: HTTPRequest, id: Int) -> Bool {
        guard let transfer = HTTPTransfer(request: request, id: id, timeout: timeout, caFile: caFile, userAgent: userAgent)
        else { return false }
        transfers[id] = transfer
        sp_multi_add_handle(multi, transfer.handle)
        return true
    }

    func cancel(id: Int) {
        guard let transfer = transfers.removeValue(forKey: id) else { return }
        sp_multi_remove_handle(multi, transfer.handle)
    }

    func perform() -> [(id: Int, outcome: TransferOutcome, elapsed: Double)] {
        var running: Int32 = 0
        sp_multi_perform(multi, &running)
        var finished: [(id: Int, outcome: TransferOutcome, elapsed: Double)] = []
        var remaining: Int32 = 0
        while let message = sp_multi_info_read(multi, &remaining) {
            guard message.pointee.msg == CURLMSG_DONE, let handle = message.pointee.easy_handle else { continue }
            let code = message.pointee.data.result
            var context: UnsafeMutableRawPointer?
            sp_easy_getinfo_pointer(handle, CURLINFO_PRIVATE, &context)
            sp_multi_remove_handle(multi, handle)
            guard let context else { continue }
            let id = Unmanaged<HTTPTransfer>.fromOpaque(context).takeUnretainedValue().id
            guard let transfer = transfers.removeValue(forKey: id) else { continue }
            finished.append((id, transfer.outcome(code), Clock.monotonic() - transfer.started))
            ended.append(transfer)
        }
        return finished
    }

    func bodyBytesSent(id: Int) -> Int {
        transfers[id]?.bodyBytesSent ?? 0
    }

    var nextTimeout: Int? {
        var milliseconds = -1
        sp_multi_timeout(multi, &milliseconds)
        return milliseconds >= 0 ? milliseconds : nil
    }

    func wait(_ descriptors: [pollfd], timeout: Int32) {
        ended.removeAll(keepingCapacity: true)
        var waits = descriptors.map { curl_waitfd(fd: $0.fd, events: $0.events, revents: 0) }
        var ready: Int32 = 0
        sp_multi_poll(multi, &waits, UInt32(waits.count), timeout, &ready)
    }
}
