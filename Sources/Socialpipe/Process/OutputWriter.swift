import Glibc

/// The one buffered writer for stdout. Lines are appended whole to `buffer`;
/// it is written out when it fills, when the loop is about to wait, and at
/// the end. A long run of bytes (a large record's echo) goes straight out
/// instead of through the buffer, and a line that grew the buffer far beyond
/// its size gives that memory back once written (`buffer` stays the same
/// object, so that a line written reads it without taking a reference to it).
/// A reader that went away (EPIPE, or POLLERR seen by the loop) marks it
/// closed: the run then stops quietly.
public final class OutputWriter {
    /// Where lines are serialised; `endLine()` after each.
    public let buffer = ByteBuffer(capacity: OutputWriter.capacity)
    /// The descriptor written.
    public let fd: Int32
    private static let capacity = 128 * 1024
    private let flushThreshold = 64 * 1024
    /// A buffer grown beyond this by a long line gives its storage back once the line is out.
    private static let largestKept = 4 << 20

    /// Set once the reader of the output has gone away.
    public private(set) var isClosed = false
    /// errno of the first write error other than EPIPE, or 0.
    public private(set) var failure: Int32 = 0

    /// A writer for `fd` (1 for stdout).
    public init(fd: Int32 = 1) {
        self.fd = fd
    }

    /// Appends `bytes` to the line being written in `buffer`; a run as long as
    /// the flush threshold is written out directly, after what is buffered.
    public func append(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard bytes.count >= flushThreshold else {
            buffer.append(bytes)
            return
        }
        if flush() { writeOut(bytes) }
    }

    /// Ends a line in `buffer` (appending `\n` unless the line holds its
    /// own) and writes the buffer out once it is large.
    public func endLine(appended: Bool = true) {
        if appended { buffer.append(0x0A) }
        if buffer.count >= flushThreshold { flush() }
        if buffer.count + buffer.freeCapacity > Self.largestKept {
            flush()
            buffer.removeAll(keepingAtMost: Self.capacity)
        }
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
        let written = writeOut(buffer.bytes)
        buffer.removeAll()
        return written
    }

    /// Writes `bytes` to the descriptor; on failure marks the output closed.
    @discardableResult
    private func writeOut(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        let result = writeAll(fd: fd, bytes)
        guard result != 0 else { return true }
        isClosed = true
        if result != EPIPE { failure = result }
        return false
    }
}
