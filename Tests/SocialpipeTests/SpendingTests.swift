import Glibc
@testable import Socialpipe
import Testing
import TestSupport

// Money, the spending policy on its own, and the engine spending within a
// budget: reserved before sending, charged from the answer, stopped by a
// refusal for billing.

@Suite struct MoneyTests {
    @Test func decimalsAreReadExactlyToTheMillionth() {
        #expect(Money(decimal: "0.015")?.micros == 15_000)
        #expect(Money(decimal: "2")?.micros == 2_000_000)
        #expect(Money(decimal: ".5")?.micros == 500_000)
        #expect(Money(decimal: "0.0000009")?.micros == 0)
        #expect(Money(decimal: "1000000000")?.micros == 1_000_000_000_000_000)
        for refused in ["", ".", "-1", "1e3", "0x10", "1.2.3", "nan", "1000000001", "99999999999999999999999"] {
            #expect(Money(decimal: refused) == nil, "\(refused)")
        }
    }

    @Test func aThousandPostsAddUpExactly() {
        var total = Money.zero
        for _ in 0..<1000 { total += Money(micros: 15_000) }
        #expect(total == Money(decimal: "15"))
        #expect(total.dollars == "$15.000")
    }

    @Test func dollarsAreWrittenAsTheSummaryAndTheEnvelopesWantThem() {
        #expect(Money(micros: 75_000).dollars == "$0.075")
        #expect(Money(micros: 500).dollars == "$0.001")
        #expect(Money(micros: 499).dollars == "$0.000")
        #expect(Money(micros: 3_500).exactDollars == "$0.0035")
        #expect(Money(micros: 200_000).exactDollars == "$0.200")
        for (micros, text) in [(15_000, "0.015"), (200_000, "0.2"), (12_000_000, "12"), (0, "0"), (1, "0.000001")] {
            let buffer = ByteBuffer(capacity: 16)
            Money(micros: Int64(micros)).append(to: buffer)
            #expect(String(decoding: buffer.bytes, as: UTF8.self) == text)
        }
    }
}

@Suite struct SpendingTests {
    func spec(_ price: Price?, service: APIService = service) -> RequestSpec {
        var spec = RequestSpec(.form("GET", "http://test.invalid/page?size=10"), rateLimitKey: "GET", service: service)
        spec.price = price
        return spec
    }

    func reserved(_ admission: Spending.Admission) -> Money? {
        guard case .go(let reserved, _) = admission else { return nil }
        return reserved
    }

    @Test func requestsGoUntilTheBudgetCannotPayAndFailuresGiveTheirShareBack() {
        let spending = Spending(budget: Money(decimal: "0.04"))
        var post = spec(Price(each: Money(micros: 15_000)))
        #expect(reserved(spending.admit(&post, ahead: .zero)) == Money(micros: 15_000))
        #expect(reserved(spending.admit(&post, ahead: .zero)) == Money(micros: 15_000))
        // A post that failed costs nothing: its share pays for another.
        spending.release(Money(micros: 15_000))
        #expect(reserved(spending.admit(&post, ahead: .zero)) == Money(micros: 15_000))
        guard case .fail(let error) = spending.admit(&post, ahead: .zero) else {
            Issue.record("a third post went over the budget")
            return
        }
        #expect(error.kind == .budget)
        #expect(spending.anyPriced)
    }

    /// Contract §7: once the budget refuses a request, so does it every later
    /// record's priced request, even a cheaper one; what a record reserved before still goes.
    @Test func onceTheBudgetRefusesLaterPricedRequestsAreRefusedToo() {
        let spending = Spending(budget: Money(decimal: "0.1"))
        var dear = spec(Price(each: Money(micros: 200_000)))
        var cheap = spec(Price(each: Money(micros: 15_000)))
        var free = spec(nil)
        guard case .fail = spending.admit(&dear, ahead: .zero), case .fail(let error) = spending.admit(&cheap, ahead: .zero) else {
            Issue.record("a request went after the budget refused one")
            return
        }
        #expect(error.kind == .budget && error.message.contains("ran out earlier"))
        #expect(reserved(spending.admit(&free, ahead: .zero)) == .zero)
        #expect(reserved(spending.admit(&cheap, ahead: Money(micros: 15_000))) == Money(micros: 15_000))
    }

    @Test func aPageAsksForNoMoreThanTheBudgetLeftPaysFor() {
        let spending = Spending(budget: Money(decimal: "0.035"))
        var page = spec(Price(each: Money(micros: 10_000), units: 10, listed: "data", fitting: { request, size in
            request.url = "http://test.invalid/page?size=\(size)"
        }))
        #expect(reserved(spending.admit(&page, ahead: .zero)) == Money(micros: 30_000))
        #expect(page.request.url.hasSuffix("size=3"))
        #expect(page.price?.units == 3)
        guard case .fail = spending.admit(&page, ahead: .zero) else {
            Issue.record("a page of no account was sent")
            return
        }
    }

    @Test func aRecordReservesItsLaterRequestsWithItsFirst() {
        let spending = Spending(budget: Money(decimal: "0.02"))
        var first = spec(Price(each: Money(micros: 5_000)))
        first.price?.andLater = Money(micros: 15_000)
        guard case .go(let reserved, let ahead) = spending.admit(&first, ahead: .zero) else {
            Issue.record("the record could be paid for")
            return
        }
        #expect(reserved == Money(micros: 5_000) && ahead == Money(micros: 15_000))
        var other = spec(Price(each: Money(micros: 5_000)))
        guard case .fail = spending.admit(&other, ahead: .zero) else {
            Issue.record("another record took what the first one reserved")
            return
        }
        var later = spec(Price(each: Money(micros: 15_000)))
        guard case .go(_, let change) = spending.admit(&later, ahead: ahead) else {
            Issue.record("the record's later request did not draw on its reservation")
            return
        }
        #expect(change == Money(micros: -15_000))
    }

    @Test func aRefusalForBillingStopsLaterRequestsToThatAPIOnly() {
        let spending = Spending(budget: nil)
        spending.stop(service, RecordError(.billing, "credits used up", status: 402))
        var unpriced = spec(nil)
        guard case .fail(let error) = spending.admit(&unpriced, ahead: .zero) else {
            Issue.record("a request went after the API refused for billing")
            return
        }
        #expect(error.kind == .billing && error.status == nil && error.message.contains("credits used up"))
        var elsewhere = spec(nil, service: PlainService())
        #expect(reserved(spending.admit(&elsewhere, ahead: .zero)) == .zero)
    }
}

@Suite struct EngineSpendingTests {
    let pages = ScriptedTransport { request, _ in (answer(#"{"data":[1,2]}"#), 1) }

    @Test func theBudgetIsNeverExceededAndEveryEnvelopeCarriesItsCost() throws {
        let tool = PagingTool()
        tool.price = Price(each: Money(micros: 10_000))
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\"", "\"c\""], options: ["--max-cost", "0.025", "--cost", "-j", "1"],
                                           transport: pages)
        #expect(status == .recordFailed)
        #expect(pages.sent.count == 2)
        #expect(output[0].hasSuffix(#","cost":0.01}"#) && output[1].hasSuffix(#","cost":0.01}"#))
        #expect(output[2].contains(#""kind":"budget""#) && output[2].contains(#""attempts":0"#) && output[2].hasSuffix(#""cost":0}"#))
    }

    @Test func aPagePricedPerItemIsChargedForWhatItReturned() throws {
        let tool = PagingTool()
        tool.price = Price(each: Money(micros: 1_000), units: 100, listed: "data")
        let (_, output) = try runLoop(tool, lines: ["\"a\""], options: ["--cost"], transport: pages)
        // The job wrote without sharing the charge out: it is all on its first envelope.
        #expect(output.first?.hasSuffix(#""cost":0}"#) == true)
    }

    @Test func aRefusalForBillingIsFinalAndLaterRecordsAreNotSent() throws {
        let refusing = ScriptedTransport { _, _ in (answer(#"{"title":"CreditsDepleted"}"#, status: 402), 1) }
        let tool = PagingTool()
        tool.price = Price(each: Money(micros: 10_000))
        let (status, output) = try runLoop(tool, lines: ["\"a\"", "\"b\""], options: ["-j", "1"], transport: refusing)
        #expect(status == .recordFailed)
        #expect(refusing.sent.count == 1)
        #expect(output[0].contains(#""kind":"billing""#) && output[0].contains(#""attempts":1"#))
        #expect(output[1].contains(#""kind":"billing""#) && output[1].contains(#""attempts":0"#))
    }

    @Test func aPostThatMayHaveBeenAppliedIsCountedAsCharged() throws {
        let failing = ScriptedTransport { _, _ in (answer("{}", status: 503), 1) }
        let tool = PostingTool()
        tool.price = Price(each: Money(micros: 200_000))
        let (_, output) = try runLoop(tool, lines: ["\"a\""], options: ["--cost"], transport: failing)
        #expect(output[0].contains(#""kind":"ambiguous""#) && output[0].hasSuffix(#""cost":0.2}"#))
    }
}

