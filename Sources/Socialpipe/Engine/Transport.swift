import Glibc

/// What carries the engine's requests: libcurl in the tools
/// (`CurlTransport`), a scripted stand-in in the unit tests.
public protocol Transport: AnyObject {
    /// Starts sending `request`; `id` comes back with its outcome. False when it cannot start.
    func start(_ request: HTTPRequest, id: Int) -> Bool
    /// Stops a transfer; its outcome never comes.
    func cancel(id: Int)
    /// Lets transfers progress; returns those that ended, with their duration in seconds.
    func perform() -> [(id: Int, outcome: TransferOutcome, elapsed: Double)]
    /// Milliseconds until the transport needs `perform()` again, or nil.
    var nextTimeout: Int? { get }
    /// Waits until one of `descriptors` (POLLIN and the like, as poll(2)
    /// takes them) or one of the transport's own is ready, or `timeout` ms.
    func wait(_ descriptors: [pollfd], timeout: Int32)
    /// Bytes of the request body of transfer `id` sent so far.
    func bodyBytesSent(id: Int) -> Int
}

extension Transport {
    public func bodyBytesSent(id: Int) -> Int { 0 }
}
