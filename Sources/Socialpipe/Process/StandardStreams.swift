import Glibc

/// Makes sure fds 0–2 are open (a closed one would be taken by the next
/// open(2)), and ignores SIGPIPE so a closed stdout is an EPIPE to handle.
public enum StandardStreams {
    /// Whether fd 1 was closed when the tool started: the outcomes would go nowhere.
    nonisolated(unsafe) public private(set) static var outputWasClosed = false

    public static func prepare() {
        for descriptor in Int32(0)...2 where fcntl(descriptor, F_GETFD) == -1 && errno == EBADF {
            if descriptor == 1 { outputWasClosed = true }
            let opened = open("/dev/null", descriptor == 0 ? O_RDONLY : O_WRONLY)
            if opened >= 0 && opened != descriptor {
                dup2(opened, descriptor)
                close(opened)
            }
        }
        signal(SIGPIPE, SIG_IGN)
    }
}
