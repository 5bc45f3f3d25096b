import Glibc
import Synchronization

/// The write end of the self-pipe; a signal handler may touch nothing else.
nonisolated(unsafe) private var signalPipeWrite: Int32 = -1
/// The last signal received and not yet taken, or 0. An atomic, so that a
/// loop busy with input that never waits still sees it between records.
private let pendingSignal = Atomic<Int32>(0)

/// SIGINT, SIGTERM and SIGHUP turned into a readable file descriptor (the
/// self-pipe trick), so the event loop's single wait also wakes for them, and
/// into a flag that a loop that does not wait checks between records.
public final class SignalWatch {
    /// Readable after a signal; poll it with the other descriptors.
    public let fd: Int32

    /// Installs handlers for SIGINT, SIGTERM and SIGHUP.
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
            pendingSignal.store(number, ordering: .sequentiallyConsistent)
            var byte: UInt8 = 1
            _ = write(signalPipeWrite, &byte, 1)
        }
        for number in [SIGINT, SIGTERM, SIGHUP] { signal(number, handler) }
    }

    /// Whether a signal is waiting to be taken; costs no system call.
    public var isPending: Bool { pendingSignal.load(ordering: .relaxed) != 0 }

    /// The signal received since the last call (newest, if several), draining the pipe.
    public func take() -> Int32? {
        let number = pendingSignal.exchange(0, ordering: .sequentiallyConsistent)
        guard number != 0 else { return nil }
        var buffer = (UInt64(0), UInt64(0), UInt64(0), UInt64(0))
        while withUnsafeMutableBytes(of: &buffer, { read(fd, $0.baseAddress, $0.count) }) > 0 {}
        return number
    }
}
