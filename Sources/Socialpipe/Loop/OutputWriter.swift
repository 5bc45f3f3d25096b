import Glibc

/// The one buffered writer for stdout. Lines are appended whole to `buffer`;
/// it is written out when it fills, when the loop is about to wait, and at
/// the end. A reader that went away (EPIPE, or POLLERR seen by the loop)
/// marks it closed: the run then stops quietly.
public final class OutputWriter {
    /// Where lines are serialised; `endLine()` after each.
    public let buffer = ByteBuffer(capacity: 128 * 1024)
    /// The descriptor written.
    public let fd: Int32
    private let flushThreshold = 64 * 1024

    /// Set once the reader of the output has gone away.
    public private(set) var isClosed = false
    /// errno of the first write error other than EPIPE, or 0.
    public private(set) var failure: Int32 = 0

    /// A writer for `fd` (1 for stdout).
    public init(fd: Int32 = 1) {
        self.fd = fd
    }

    /// Ends a line in `buffer` (appending `\n` unless the line holds its
    /// own) and writes the buffer out once it is large.
    public func endLine(appended: Bool = true) {
        if appended { buffer.append(0x0A) }
        if buffer.count >= flushThreshold { flush() }
    }

    /// Marks the output closed, as an EPIPE would, when the loop sees that
    /// the reader has gone before anything was written to it.
    public func readerIsGone() {
        isClosed = true
        buffer.removeAll()
    }

    /// Writes out everything buffered. Returns false once the output is closed or failed.
    @discardableResult
    public func flush() -> Bool {
        guard !isClosed else {
            buffer.removeAll()
            return false
        }
        guard !buffer.isEmpty else { return true }
        let result = writeAll(fd: fd, buffer.bytes)
        buffer.removeAll()
        if result != 0 {
            isClosed = true
            if result != EPIPE { failure = result }
            return false
        }
        return true
    }
}
