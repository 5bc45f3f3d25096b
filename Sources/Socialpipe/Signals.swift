import Glibc

/// The write end of the self-pipe; a signal handler may touch nothing else.
nonisolated(unsafe) private var signalPipeWrite: Int32 = -1
nonisolated(unsafe) private var lastSignal: Int32 = 0

/// SIGINT and SIGTERM turned into a readable file descriptor (the self-pipe
/// trick), so the event loop's single wait also wakes for them.
public final class SignalWatch {
    /// Readable after a signal; poll it with the other descriptors.
    public let fd: Int32

    /// Installs handlers for SIGINT and SIGTERM.
    public init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        fd = ends[0]
        signalPipeWrite = ends[1]
        let handler: @convention(c) (Int32) -> Void = { number in
            lastSignal = number
            var byte: UInt8 = 1
            _ = write(signalPipeWrite, &byte, 1)
        }
        signal(SIGINT, handler)
        signal(SIGTERM, handler)
    }

    /// The signals received since the last call (drains the pipe), newest last.
    public func take() -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 64)
        var received = false
        while read(fd, &buffer, buffer.count) > 0 { received = true }
        return received ? lastSignal : nil
    }
}
