import Glibc
import Socialpipe

/// The loopback listener of the OAuth 2.0 flow: it waits on the redirect
/// URI's port (127.0.0.1 only) for the browser to bring the `code`, answers
/// with a page saying the terminal may take over, and hands back the query.
struct Loopback {
    let port: UInt16
    let path: String
    private let socket: Int32

    /// Listens on `redirect`, which must be `http://127.0.0.1:PORT/PATH` (or `localhost`).
    init(redirect: String) throws(RecordError) {
        guard let parts = Self.parse(redirect) else {
            throw RecordError(.input, "--redirect-uri must be http://127.0.0.1:PORT/PATH to be listened on (or use --no-browser)")
        }
        (port, path) = parts
        let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
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
        guard bound == 0, listen(fd, 4) == 0 else {
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

    /// The query of the first request to `path`, waiting at most `timeout`
    /// seconds; other requests (a browser's favicon) get a 404.
    func waitForRedirect(timeout: Double) throws(RecordError) -> String {
        let deadline = Clock.monotonic() + timeout
        defer { close(socket) }
        while true {
            let left = deadline - Clock.monotonic()
            guard left > 0 else { throw RecordError(.auth, "no redirect came to 127.0.0.1:\(port) within \(Int(timeout)) s") }
            var waiting = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
            let ready = poll(&waiting, 1, Int32(min(left, 1) * 1000))
            if ready <= 0 { continue }
            let client = accept(socket, nil, nil)
            if client < 0 { continue }
            _ = fcntl(client, F_SETFD, FD_CLOEXEC)
            let target = Self.readTarget(client)
            let ours = target.map { $0 == path || $0.hasPrefix(path + "?") } ?? false
            let page = ours ? "<!doctype html><title>socialpipe</title><p>Authorization received: go back to the terminal."
                            : "<!doctype html><title>Not found</title><p>Not found."
            let response = "HTTP/1.1 \(ours ? "200 OK" : "404 Not Found")\r\nContent-Type: text/html; charset=utf-8\r\n"
                + "Content-Length: \(page.utf8.count)\r\nConnection: close\r\n\r\n" + page
            var text = response
            _ = text.withUTF8 { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            close(client)
            if ours, let target {
                guard let question = target.firstIndex(of: "?") else { return "" }
                return String(target[target.index(after: question)...])
            }
        }
    }

    /// The request target of an HTTP request's first line, read within 5 s.
    private static func readTarget(_ client: Int32) -> String? {
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 2048)
        let deadline = Clock.monotonic() + 5
        while !bytes.contains(0x0A) && bytes.count < 16384 && Clock.monotonic() < deadline {
            var waiting = pollfd(fd: client, events: Int16(POLLIN), revents: 0)
            guard poll(&waiting, 1, 1000) > 0 else { continue }
            let count = recv(client, &chunk, chunk.count, 0)
            if count <= 0 { break }
            bytes += chunk[..<count]
        }
        let line = String(decoding: bytes.prefix { $0 != 0x0D && $0 != 0x0A }, as: UTF8.self)
        let words = line.split(separator: " ")
        guard words.count == 3, words[0] == "GET" else { return nil }
        return String(words[1])
    }
}
