import Glibc
@testable import Socialpipe
import Testing

@Suite struct SystemCallTests {
    @Test func anInterruptedCallIsMadeAgainUntilItAnswers() {
        var calls = 0
        let answer = retryingOnInterrupt { () -> Int in
            calls += 1
            guard calls == 3 else {
                errno = EINTR
                return -1
            }
            return 7
        }
        #expect(answer == 7)
        #expect(calls == 3)
    }

    @Test func anotherFailureIsAnsweredAtOnceWithItsErrno() {
        var calls = 0
        let answer = retryingOnInterrupt { () -> Int32 in
            calls += 1
            errno = EAGAIN
            return -1
        }
        #expect(answer == -1)
        #expect(errno == EAGAIN)
        #expect(calls == 1)
    }

    @Test func writeAllWritesEveryByte() throws {
        var ends: [Int32] = [-1, -1]
        try #require(pipe(&ends) == 0)
        defer { close(ends[0]) }
        // Less than a pipe holds, so that nothing waits for the reader.
        let sent = (0..<40_000).map { UInt8(truncatingIfNeeded: $0 * 7) }
        #expect(sent.withUnsafeBufferPointer { writeAll(fd: ends[1], $0) } == 0)
        close(ends[1])
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while case let count = read(ends[0], &chunk, chunk.count), count > 0 { received += chunk[..<count] }
        #expect(received == sent)
    }

    @Test func writeAllAnswersTheErrnoOfAFailedWrite() throws {
        let full = open("/dev/full", O_WRONLY | O_CLOEXEC)
        try #require(full >= 0)
        defer { close(full) }
        #expect([UInt8](repeating: 0x61, count: 10).withUnsafeBufferPointer { writeAll(fd: full, $0) } == ENOSPC)
        #expect([UInt8]().withUnsafeBufferPointer { writeAll(fd: full, $0) } == 0)
    }
}
