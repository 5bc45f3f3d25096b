@testable import Socialpipe
import Glibc

/// `LineReader` fed through a pipe in pieces of every size: the lines it
/// hands out are those of the whole input split at once, numbered the
/// same, blank lines skipped but counted, a line over the limit reported
/// with its first bytes and its length, whatever the pieces.
///
/// Input: a byte choosing `--max-line`, a byte seeding the piece sizes, then the text.
public enum Lines {
    enum Line: Equatable {
        case text(number: Int, bytes: [UInt8])
        case tooLong(number: Int, prefix: [UInt8], length: Int)
    }

    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        var input = FuzzInput(data)
        let limitChoice = Int(input.byte())
        // Small limits find the edges; 0 keeps the tools' default.
        let maxLine = limitChoice == 0 ? 1 << 20 : limitChoice
        var seed = UInt32(input.byte()) | 1
        // A pipe holds 64 KiB; longer inputs would block the writer.
        let text = Array(input.rest().prefix(60_000))

        var pipeEnds: [Int32] = [0, 0]
        guard pipe(&pipeEnds) == 0 else { return }
        defer { close(pipeEnds[0]) }
        let reader = LineReader(fd: pipeEnds[0], maxLine: maxLine)
        var lines: [Line] = []
        func drain() {
            while let line = reader.nextLine() {
                switch line {
                case .text(let number, let bytes): lines.append(.text(number: number, bytes: Array(bytes)))
                case .tooLong(let number, let prefix, let length): lines.append(.tooLong(number: number, prefix: prefix, length: length))
                }
            }
        }
        var offset = 0
        while offset < text.count {
            seed = seed &* 1_103_515_245 &+ 12345
            let piece = min(text.count - offset, 1 + Int(seed >> 16) % 300)
            let written = text[offset..<(offset + piece)].withUnsafeBytes { write(pipeEnds[1], $0.baseAddress, $0.count) }
            guard written > 0 else { break }
            offset += written
            reader.fill()
            drain()
        }
        close(pipeEnds[1])
        while !reader.reachedEnd {
            reader.fill()
            drain()
        }
        drain()

        let expected = split(text, maxLine: maxLine)
        require(lines.count == expected.count,
                "LineReader gave \(lines.count) lines, the input has \(expected.count) (max-line \(maxLine))")
        for (got, wanted) in zip(lines, expected) {
            require(got == wanted, "LineReader gave \(describe(got)), the input has \(describe(wanted)) (max-line \(maxLine))")
        }
    }

    /// The lines of the whole text, as contract §1 defines them: ended by
    /// `\n` (one `\r` before it dropped), the last perhaps without one;
    /// blank lines (spaces and tabs only) counted and skipped.
    static func split(_ text: [UInt8], maxLine: Int) -> [Line] {
        var lines: [Line] = []
        var pieces = text.split(separator: 0x0A, omittingEmptySubsequences: false)
        if text.last == 0x0A || text.isEmpty { pieces.removeLast() }
        for (index, piece) in pieces.enumerated() {
            var content = piece
            if content.last == 0x0D { content = content.dropLast() }
            if content.count > maxLine {
                lines.append(.tooLong(number: index + 1, prefix: Array(content.prefix(LineReader.prefixLength)), length: content.count))
            } else if !content.allSatisfy({ $0 == 0x20 || $0 == 0x09 }) {
                lines.append(.text(number: index + 1, bytes: Array(content)))
            }
        }
        return lines
    }

    static func describe(_ line: Line) -> String {
        switch line {
        case .text(let number, let bytes): return "line \(number) \(escaped(bytes))"
        case .tooLong(let number, let prefix, let length): return "line \(number) too long (\(length) bytes) starting \(escaped(prefix))"
        }
    }
}
