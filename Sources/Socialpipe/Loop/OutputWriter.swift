import Glibc

/// The one buffered writer for fd 1. Records are appended whole; the buffer
/// is written out when it fills, when the process is about to wait, and at
/// exit. A closed reader (EPIPE) marks it closed: the run then stops quietly.
public final class OutputWriter {
    private let buffer = ByteBuffer(capacity: 128 * 1024)
    private let fd: Int32
    private let flushThreshold = 64 * 1024

    /// Set once the reader of fd 1 has gone away (EPIPE).
    public private(set) var isClosed = false
    /// errno of the first write error other than EPIPE, or 0.
    public private(set) var failure: Int32 = 0

    /// A writer for `fd` (1 for stdout).
    public init(fd: Int32 = 1) {
        self.fd = fd
    }

    private func flushIfFull() {
        if buffer.count >= flushThreshold { flush() }
    }

    /// Appends raw bytes.
    public func write(_ bytes: UnsafeBufferPointer<UInt8>) {
        guard !isClosed else { return }
        buffer.append(bytes)
        flushIfFull()
    }

    /// Ends a line: appends `\n` and writes the buffer out once it is large.
    public func endLine() {
        writeByte(0x0A)
        flushIfFull()
    }

    /// Appends one byte.
    @inline(__always)
    public func writeByte(_ byte: UInt8) {
        guard !isClosed else { return }
        buffer.append(byte)
    }

    /// Appends a literal without building a String.
    @inline(__always)
    public func write(_ text: StaticString) {
        write(UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }

    /// Appends the UTF-8 of a string. Disfavoured so that a literal takes
    /// the StaticString overload instead of being copied into a String.
    @_disfavoredOverload
    public func write(_ text: String) {
        var text = text
        text.withUTF8 { write($0) }
    }

    /// Appends bytes.
    public func write(_ bytes: [UInt8]) {
        bytes.withUnsafeBufferPointer { write($0) }
    }

    /// Marks the output closed, as an EPIPE would, when the loop sees that
    /// the reader of fd 1 has gone before anything was written to it.
    public func readerIsGone() {
        isClosed = true
        buffer.removeAll()
    }

    /// Writes out everything buffered. Returns false once the output is closed or failed.
    @discardableResult
    public func flush() -> Bool {
        guard !isClosed else { return false }
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
