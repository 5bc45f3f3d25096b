import Glibc

/// One physical line of input.
public enum InputLine {
    /// A non-blank line without its `\n` and one `\r`; the bytes are valid
    /// until the reader is asked for more.
    case text(number: Int, bytes: UnsafeBufferPointer<UInt8>)
    /// A line longer than the limit: its first bytes and its full length.
    case tooLong(number: Int, prefix: [UInt8], length: Int)
}

/// Reads a descriptor with read(2) into its own buffer (never through
/// `FILE*`, whose buffer poll cannot see) and hands out lines, counting every
/// physical line, blank ones included. Memory stays within the line limit
/// however long a line is, and a long line's room is given back once it has
/// been handed out.
public final class LineReader {
    /// The descriptor read.
    public let fd: Int32
    private let maxLine: Int
    /// Bytes read; those before `start` are handed out already.
    private var buffer = ByteBuffer(capacity: LineReader.capacity)
    /// The buffer's size, until a line longer than that arrives.
    private static let capacity = 64 * 1024
    /// A buffer grown beyond this by a long line is replaced once the line is handed out.
    private static let largestKept = 4 << 20
    private var start = 0
    /// Bytes from `start` already searched for a newline and found without
    /// one: a long line arriving in many reads is searched once, not once per read.
    private var searched = 0
    /// Bytes memchr has looked at so far (the unit tests check it stays linear).
    private(set) var bytesSearched = 0
    /// Bytes the buffer has room for (the unit tests check a long line's room is given back).
    var room: Int { buffer.count + buffer.freeCapacity }
    /// The number of the last line ended.
    private var lineNumber: Int
    /// Skipping the rest of an over-long line: its prefix (up to
    /// `prefixLength`), its length so far, and its last byte read (a `\r`
    /// before the `\n` to come is not part of the line).
    private var overlong: (prefix: [UInt8], length: Int, last: UInt8)?

    /// Bytes read(2) has given so far.
    public private(set) var bytesRead = 0
    /// True once read(2) has reported end of input.
    public private(set) var reachedEnd = false
    /// errno of a failed read, or 0.
    public private(set) var readError: Int32 = 0

    /// Bytes of an over-long line kept for the `raw` field.
    public static let prefixLength = 256

    /// A reader of `fd` that refuses lines longer than `maxLine` bytes and
    /// numbers its first line `firstLine` (a part of a larger input keeps its numbers).
    public init(fd: Int32 = 0, maxLine: Int, firstLine: Int = 1) {
        self.fd = fd
        self.maxLine = maxLine
        lineNumber = firstLine - 1
    }

    private var end: Int { buffer.count }

    /// Whether a read would return at once (data or end of input).
    public var hasInputReady: Bool {
        var descriptor = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        return poll(&descriptor, 1, 0) > 0
    }

    /// Whether `nextLine()` has a line to give without reading.
    public var hasBufferedLine: Bool {
        if findNewline() != nil { return true }
        return reachedEnd && (end > start || overlong != nil)
    }

    /// The offset of the next `\n` at or after `start`, searching only bytes not searched before.
    private func findNewline() -> Int? {
        let unsearched = end - start - searched
        guard unsearched > 0 else { return nil }
        let base = buffer.start
        if base[start + searched] == 0x0A { return start + searched }
        if let found = memchr(base + start + searched, 0x0A, unsearched) {
            let offset = UnsafeMutableRawPointer(found).assumingMemoryBound(to: UInt8.self) - base
            bytesSearched += offset - (start + searched) + 1
            searched = offset - start
            return offset
        }
        bytesSearched += unsearched
        searched = end - start
        return nil
    }

    /// Performs one read(2), blocking if nothing is available.
    public func fill() {
        guard !reachedEnd else { return }
        if start > 0 {
            buffer.removeFirst(start)
            start = 0
        }
        // Grows by doubling while a line is longer than the buffer (up to
        // the line limit; past it the line is skipped instead).
        let room = max(buffer.freeCapacity, buffer.count)
        let destination = buffer.reserve(room)
        let count = retryingOnInterrupt { read(fd, destination, buffer.freeCapacity) }
        if count > 0 {
            buffer.advance(by: count)
            bytesRead += count
            return
        }
        if count < 0 { readError = errno }
        reachedEnd = true
    }

    /// The next complete line, or nil when more input is needed. After the
    /// end of input, a last line without `\n` is returned too.
    public func nextLine() -> InputLine? {
        giveBackRoom()
        while true {
            let available = end - start
            if let lineEnd = findNewline() {
                let lineStart = start
                start = lineEnd + 1
                searched = 0
                if let line = finish(from: lineStart, to: lineEnd) { return line }
                continue
            }
            if overlong != nil {
                keepSkipping(start..<end)
                skip()
                if reachedEnd { return finish(from: start, to: start) }
                return nil
            }
            if available > maxLine + 1 {
                // No newline within the limit: remember the prefix, skip the rest.
                overlong = ([], 0, 0)
                keepSkipping(start..<end)
                skip()
                return nil
            }
            if reachedEnd && available > 0 {
                let lineStart = start
                skip()
                return finish(from: lineStart, to: end)
            }
            return nil
        }
    }

    /// Moves the bytes not yet handed out to a buffer of the usual size when a
    /// long line (handed out or skipped by now) grew the buffer far beyond it.
    private func giveBackRoom() {
        let left = end - start
        guard buffer.count + buffer.freeCapacity > Self.largestKept, left <= Self.capacity / 2 else { return }
        let smaller = ByteBuffer(capacity: Self.capacity)
        smaller.append(buffer[start..<end])
        buffer = smaller
        start = 0
    }

    /// Counts `range` into the over-long line being skipped, its prefix
    /// filled up to `prefixLength` however the line arrives.
    private func keepSkipping(_ range: Range<Int>) {
        guard var skipping = overlong, !range.isEmpty else { return }
        let room = Self.prefixLength - skipping.prefix.count
        if room > 0 { skipping.prefix += buffer[range.lowerBound..<(range.lowerBound + min(room, range.count))] }
        skipping.length += range.count
        skipping.last = buffer.start[range.upperBound - 1]
        overlong = skipping
    }

    /// Everything read so far is handed out or skipped.
    private func skip() {
        start = end
        searched = 0
    }

    /// Ends a physical line spanning `from..<to` (without its `\n`).
    private func finish(from lineStart: Int, to lineEnd: Int) -> InputLine? {
        lineNumber += 1
        if overlong != nil {
            keepSkipping(lineStart..<lineEnd)
            guard var skipped = overlong else { return nil }
            overlong = nil
            if skipped.last == 0x0D {
                // The `\r` of a `\r\n` ending is no part of the line.
                if skipped.prefix.count == skipped.length { skipped.prefix.removeLast() }
                skipped.length -= 1
            }
            return .tooLong(number: lineNumber, prefix: skipped.prefix, length: skipped.length)
        }
        let base = buffer.start
        var contentEnd = lineEnd
        if contentEnd > lineStart && base[contentEnd - 1] == 0x0D { contentEnd -= 1 }
        let length = contentEnd - lineStart
        if length > maxLine {
            return .tooLong(number: lineNumber, prefix: Array(buffer[lineStart..<(lineStart + min(length, Self.prefixLength))]),
                            length: length)
        }
        var blank = true
        for index in lineStart..<contentEnd where base[index] != 0x20 && base[index] != 0x09 {
            blank = false
            break
        }
        if blank { return nil }
        return .text(number: lineNumber, bytes: buffer[lineStart..<contentEnd])
    }
}
