import Glibc
import Socialpipe
import SocialpipeInteractive
import SocialpipeX

/// The loopback listener of the OAuth 2.0 flow: it waits on the redirect
/// URI's port (127.0.0.1 only) for the browser to bring the `code` with the
/// `state` this run sent, answers with a page saying the terminal may take
/// over, and hands back the query. Anything can connect to a loopback port,
/// so connections are served together on one poll, each with its own buffer
/// and deadline (an idle one holds up nobody), and a request that is not that
/// redirect gets an error page while the wait goes on.
struct Loopback {
    let port: UInt16
    let path: String
    private let socket: Int32

    /// The most connections open at once; past it the oldest is closed.
    static let connectionLimit = 32
    /// The most bytes of a request's line and headers read.
    static let requestLimit = 16 * 1024
    /// How long a connection has to send its request.
    static let requestTimeout = 10.0

    /// Listens on `redirect`, which must be `http://127.0.0.1:PORT/PATH` (or `localhost`).
    init(redirect: String) throws(RecordError) {
        guard let parts = Self.parse(redirect) else {
            throw RecordError(.input, "--redirect-uri must be http://127.0.0.1:PORT/PATH to be listened on (or use --no-browser)")
        }
        (port, path) = parts
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue), 0)
        guard fd >= 0 else { throw RecordError(.network, "cannot open a socket: \(String(cString: strerror(errno)))") }
        var yes: Int32 = 1
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = port.bigEndian
        address.sin_addr.s_addr = in_addr_t(0x7F00_0001).bigEndian
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0, listen(fd, 64) == 0 else {
            let problem = String(cString: strerror(errno))
            close(fd)
            throw RecordError(.network, "cannot listen on 127.0.0.1:\(port) for the redirect: \(problem)")
        }
        socket = fd
    }

    /// `(port, path)` of a loopback http URL.
    static func parse(_ uri: String) -> (UInt16, String)? {
        for host in ["http://127.0.0.1:", "http://localhost:"] where uri.hasPrefix(host) {
            let rest = uri.dropFirst(host.count)
            let digits = rest.prefix { $0.isASCII && $0.isNumber }
            guard let port = UInt16(digits), port > 0 else { return nil }
            let path = String(rest.dropFirst(digits.count))
            return (port, path.isEmpty ? "/" : path)
        }
        return nil
    }

    /// A connection whose request is still coming.
    private struct Client {
        let socket: Int32
        let deadline: Double
        var received: [UInt8] = []
        /// Answered 431 already: what it still sends is read and dropped until
        /// it closes (or its deadline), as closing with unread bytes would
        /// reset the connection before the client could read the answer.
        var refused = false
    }

    /// The query of the first request to `path` that carries `state`,
    /// waiting at most `timeout` seconds. Other requests to `path` (another
    /// state or none, no query) and malformed ones get a 400, other paths (a
    /// browser's favicon) a 404, and the wait goes on.
    func waitForRedirect(state: String, timeout: Double) throws(RecordError) -> String {
        let deadline = Clock.monotonic() + timeout
        var clients: [Client] = []
        defer {
            for client in clients { close(client.socket) }
            close(socket)
        }
        while true {
            let now = Clock.monotonic()
            guard now < deadline else { throw RecordError(.auth, "no redirect came to 127.0.0.1:\(port) within \(Int(timeout)) s") }
            clients.removeAll { client in
                guard client.deadline <= now else { return false }
                if !client.refused { Self.send(client.socket, "408 Request Timeout", "The request took too long.") }
                close(client.socket)
                return true
            }
            var waiting = [pollfd(fd: socket, events: Int16(POLLIN), revents: 0)]
                + clients.map { pollfd(fd: $0.socket, events: Int16(POLLIN), revents: 0) }
            let wake = clients.reduce(deadline) { min($0, $1.deadline) }
            guard poll(&waiting, nfds_t(waiting.count), Int32(((wake - now) * 1000).rounded(.up))) > 0 else { continue }
            // From the last, so that removing one leaves the others' places.
            for index in clients.indices.reversed() where waiting[index + 1].revents != 0 {
                guard let head = Self.receive(&clients[index]) else { continue }
                if clients[index].refused {
                    close(clients.remove(at: index).socket)
                } else if head.count > Self.requestLimit {
                    Self.send(clients[index].socket, "431 Request Header Fields Too Large", "The request is too large.")
                    shutdown(clients[index].socket, Int32(SHUT_WR))
                    clients[index].refused = true
                    clients[index].received = []
                } else {
                    let client = clients.remove(at: index)
                    if let query = answer(head, on: client.socket, state: state) { return query }
                }
            }
            if waiting[0].revents != 0 { accept(into: &clients, deadline: now + Self.requestTimeout) }
        }
    }

    /// Takes every connection waiting to be accepted; past `connectionLimit`
    /// the oldest open one is closed, so a flood cannot shut the browser out.
    private func accept(into clients: inout [Client], deadline: Double) {
        while true {
            let client = retryingOnInterrupt { Glibc.accept(socket, nil, nil) }
            if client < 0 {
                if errno == ECONNABORTED { continue }
                return
            }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            if clients.count >= Self.connectionLimit { close(clients.removeFirst().socket) }
            clients.append(Client(socket: client, deadline: deadline))
        }
    }

    /// Reads what `client` sent so far (without waiting: MSG_DONTWAIT): nil
    /// while the head of its request (line and headers) is incomplete, or a
    /// refused client goes on sending; else what came, also when the
    /// connection closed or failed first, or the head outgrew `requestLimit`.
    private static func receive(_ client: inout Client) -> [UInt8]? {
        var chunk = [UInt8](repeating: 0, count: 4096)
        let count = retryingOnInterrupt { recv(client.socket, &chunk, chunk.count, Int32(MSG_DONTWAIT)) }
        if count < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) { return nil }
        guard count > 0 else { return client.received }
        if client.refused { return nil }
        client.received += chunk[..<count]
        // The head ends at an empty line.
        let bytes = client.received
        let ended = bytes.indices.contains { index in
            bytes[index] == 0x0A && (bytes[(index + 1)...].first == 0x0A || bytes[(index + 1)...].starts(with: [0x0D, 0x0A]))
        }
        return ended || bytes.count > requestLimit ? bytes : nil
    }

    /// Answers the request whose head is `head` and closes the connection;
    /// the query when it is the redirect this run waits for.
    private func answer(_ head: [UInt8], on client: Int32, state: String) -> String? {
        let line = head.prefix { $0 != 0x0D && $0 != 0x0A }
        let words = line.split(separator: 0x20, omittingEmptySubsequences: false)
        guard words.count == 3, words[0].elementsEqual("GET".utf8), words[2].starts(with: "HTTP/1.".utf8) else {
            Self.respond(client, "400 Bad Request", "Not a request this listener takes.")
            return nil
        }
        let target = words[1]
        let question = target.firstIndex(of: 0x3F)
        guard target[..<(question ?? target.endIndex)].elementsEqual(path.utf8) else {
            Self.respond(client, "404 Not Found", "Not found.")
            return nil
        }
        // Only the browser that was sent to the authorization page knows the
        // state (CSRF, RFC 6749 §10.12): whatever else comes is refused.
        let query = question.map { Array(target[($0 + 1)...]) } ?? []
        let states = PercentEncoding.formPairs(query).filter { $0.name.elementsEqual("state".utf8) }
        guard states.count == 1, Self.same(states[0].value, Array(state.utf8)) else {
            Self.respond(client, "400 Bad Request", "Not the answer to the authorization tw-auth asked for: ignored.")
            return nil
        }
        Self.respond(client, "200 OK", "Authorization received: go back to the terminal.")
        return String(decoding: query, as: UTF8.self)
    }

    /// Whether `a` and `b` are equal, in a time that does not tell where they differ.
    private static func same(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && zip(a, b).reduce(0) { $0 | ($1.0 ^ $1.1) } == 0
    }

    /// Sends a small HTML page with `status`, then closes the connection.
    private static func respond(_ client: Int32, _ status: String, _ text: String) {
        send(client, status, text)
        close(client)
    }

    /// Sends a small HTML page with `status` (a few hundred bytes: the socket's buffer takes it at once).
    private static func send(_ client: Int32, _ status: String, _ text: String) {
        let page = "<!doctype html><title>socialpipe</title><p>" + text
        var response = "HTTP/1.1 \(status)\r\nContent-Type: text/html; charset=utf-8\r\n"
            + "Content-Length: \(page.utf8.count)\r\nConnection: close\r\n\r\n" + page
        _ = response.withUTF8 { Glibc.send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL) | Int32(MSG_DONTWAIT)) }
    }
}
