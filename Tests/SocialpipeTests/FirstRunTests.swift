import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// The first run, fixed (issue 11): the pieces behind the summary line, the
// progress line's erasure and fractional --timeout (the -v response line's
// tests are RequestDescriptionTests). End to end in Tests/firstrun/.

@Suite struct FailureSummaryTests {
    func queue() -> OutcomeQueue {
        OutcomeQueue(ordered: true, style: .envelopes, output: OutputWriter(fd: open("/dev/null", O_WRONLY | O_CLOEXEC)))
    }

    @Test func countsFailedRecordsByKindLargestFirstThenByName() {
        let queue = queue()
        let kinds: [RecordError.Kind?] = [.duplicate, nil, .auth, .input, nil, .input, .rateLimit]
        for (index, kind) in kinds.enumerated() {
            let reply = Reply(queue: queue, line: index + 1, input: nil)
            if let kind { reply.fail(RecordError(kind, "no")) } else { reply.succeed(JSON.object()) }
            reply.finish()
        }
        #expect(queue.failureSummary == "5 of 7 failed (input 2, auth 1, duplicate 1, rate_limit 1)")
    }

    @Test func aRecordCountsOnceAndAnAnswerThatFailsTheRunIsNoFailure() {
        let queue = queue()
        let twice = Reply(queue: queue, line: 1, input: nil)
        twice.fail(RecordError(.http, "first"))
        twice.fail(RecordError(.network, "second"))
        twice.finish()
        let denied = Reply(queue: queue, line: 2, input: nil)
        denied.succeed(JSON.object(), failsRun: true)
        denied.finish()
        #expect(queue.failureSummary == "1 of 2 failed (http 1)")
        #expect(queue.anyFailed)
    }

    @Test func nothingToSayWhenNothingFailed() {
        let queue = queue()
        let reply = Reply(queue: queue, line: 1, input: nil)
        reply.succeed(JSON.object(), failsRun: true)
        reply.finish()
        #expect(queue.failureSummary == nil)
    }
}

@Suite struct ProgressLineErasureTests {
    @Test func aMessageErasesTheProgressLineInTheSameWrite() {
        let line = Diagnostics.line("POST https://x\u{1B}[2J", erasingProgressLine: true)
        #expect(line.hasPrefix("\r\u{1B}[K"))
        #expect(line.hasSuffix(": POST https://x\\u{1b}[2J\n"))
        #expect(!Diagnostics.line("hello", erasingProgressLine: false).contains("\r"))
    }
}

@Suite struct ProgressLineTextTests {
    func text(done: Int = 0, inFlight: Int = 1, work: WorkProgress? = nil, uploaded: (sent: Int, total: Int)? = nil,
              wait: Int? = nil) -> String {
        ProgressLine.text(tool: "tool", done: done, failed: 0, inFlight: inFlight, work: work, uploaded: uploaded,
                          waitSeconds: wait)
    }

    @Test func countsRecordsUnlessTheToolCountsItsOwnWork() {
        #expect(text(done: 3) == "tool: 3 done, 0 failed, 1 in flight")
        let accounts = WorkProgress(count: 12_000, unit: ("account", "accounts"), detail: "page 13")
        #expect(text(work: accounts) == "tool: 12,000 accounts (page 13), 0 failed")
        #expect(text(work: WorkProgress(count: 1, unit: ("account", "accounts"))) == "tool: 1 account, 0 failed")
        #expect(text(work: accounts, wait: 75) == "tool: 12,000 accounts (page 13), 0 failed, waiting 1:15 for the rate limit")
    }

    @Test func groupsThousandsWithCommas() {
        #expect(WorkProgress.grouped(0) == "0")
        #expect(WorkProgress.grouped(999) == "999")
        #expect(WorkProgress.grouped(1000) == "1,000")
        #expect(WorkProgress.grouped(1_234_567) == "1,234,567")
    }

    @Test func anUploadUnderAMebibyteIsCountedInKibibytes() {
        #expect(text(uploaded: (0, 40_000)) == "tool: 0 done, 0 failed, 1 in flight, 0 of 40 KiB uploaded")
        #expect(text(uploaded: (100, 500)).hasSuffix(", 1 of 1 KiB uploaded"))
        #expect(text(uploaded: (3 << 20, 50 << 20)).hasSuffix(", 3.0 of 50.0 MiB uploaded"))
        #expect(text(uploaded: (0, 0)) == "tool: 0 done, 0 failed, 1 in flight")
    }
}

@Suite struct DecimalOptionTests {
    let tool = ToolDescription(name: "decimal-test", usage: "", summary: "", epilogue: "", primaryField: nil)

    func timeout(_ arguments: [String]) throws -> Double {
        let parser = ArgumentParser(tool: tool, options: [CommonOptions.timeout])
        let parsed = try #require(parser.parse(arguments).arguments)
        return parsed.decimal(CommonOptions.timeout, default: 30)
    }

    @Test func takesFractionsOfASecond() throws {
        #expect(try timeout([]) == 30)
        #expect(try timeout(["--timeout", "0.5"]) == 0.5)
        #expect(try timeout(["--timeout=2.25"]) == 2.25)
        #expect(try timeout(["--timeout", ".25"]) == 0.25)
        #expect(try timeout(["--timeout", "86400"]) == 86_400)
    }

    @Test func refusesZeroNegativesAndWhatIsNoPlainNumber() {
        for value in ["0", "0.000", "0.0004", "-1", "-0.5", "+1", "abc", "nan", "inf", "infinity", "1e3", "0x10", "",
                      ".", "1.2.3", " 1", "86400.5"] {
            #expect(throws: StartupError.self, "\(value)") { _ = try timeout(["--timeout", value]) }
        }
    }
}
