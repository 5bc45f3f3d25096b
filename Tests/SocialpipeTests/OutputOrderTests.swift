import Glibc
@testable import Socialpipe
import Testing

// Ordered output read back from a file: each record's lines in input order,
// whichever record finishes first, with `null` echoed for a record without
// input; and the output buffer after a line far longer than itself.

@Suite struct OutputOrderTests {
    /// A writer to a temporary file, and a way to read back what it wrote.
    final class Capture {
        let fd: Int32
        let output: OutputWriter
        private var path: [CChar]

        init() {
            path = Array("/tmp/output-order-test-XXXXXX".utf8CString)
            fd = mkstemp(&path)
            output = OutputWriter(fd: fd)
        }

        deinit {
            close(fd)
            unlink(path)
        }

        func lines() -> [String] {
            output.flush()
            return linesWritten(to: fd)
        }
    }

    func result(_ reply: Reply, _ text: String) {
        Array(text.utf8).withUnsafeBufferPointer { reply.succeed(resultText: $0) }
    }

    @Test func linesFollowTheInputWhicheverRecordFinishesFirst() {
        let capture = Capture()
        let queue = OutcomeQueue(ordered: true, style: .envelopes, output: capture.output)
        let first = Reply(queue: queue, line: 1, input: nil)
        let second = Reply(queue: queue, line: 2, input: nil)
        let third = Reply(queue: queue, line: 3, input: nil)
        #expect(first.isAtHead && !second.isAtHead && !third.isAtHead)
        result(third, "3")
        third.finish()
        result(second, "2a")
        result(first, "1")
        result(second, "2b")
        first.finish()
        // The second record is the head now: its held line went out, and
        // the next goes straight out; the third waits for it still.
        #expect(!first.isAtHead && second.isAtHead && !third.isAtHead)
        result(second, "2c")
        second.finish()
        // A record that comes after every earlier one has finished is at the head at once.
        let fourth = Reply(queue: queue, line: 4, input: nil)
        #expect(fourth.isAtHead)
        result(fourth, "4")
        fourth.finish()
        let lines = capture.lines()
        #expect(lines == [1, 2, 2, 2, 3, 4].enumerated().map { index, line in
            let text = ["1", "2a", "2b", "2c", "3", "4"][index]
            return "{\"ok\":true,\"line\":\(line),\"input\":null,\"result\":\(text)}"
        })
    }

    @Test func aLineFarLongerThanTheBufferLeavesItAsLargeAsBefore() {
        let capture = Capture()
        let output = capture.output
        let room = output.buffer.count + output.buffer.freeCapacity
        let long = [UInt8](repeating: 0x61, count: 5 << 20)
        output.buffer.append(long.withUnsafeBufferPointer { $0 })
        output.endLine()
        #expect(output.buffer.count + output.buffer.freeCapacity == room)
        output.buffer.append("short")
        output.endLine()
        let lines = capture.lines()
        #expect(lines.map(\.count) == [5 << 20, 5])
    }
}
