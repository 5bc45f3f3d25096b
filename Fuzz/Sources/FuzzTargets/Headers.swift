@testable import Socialpipe
@testable import SocialpipeX
@testable import SocialpipeGraph

/// The header parsers (`HTTPResponse.retryAfter`, `Clock.seconds`,
/// `Clock.epoch`, `Clock.iso8601`, `XService` and `GraphService`
/// `readRateLimits`): any header value is read without a crash; a wait is
/// never negative or NaN; a time written as ISO 8601 reads back as the same
/// second; and (issue 17 §1) what a rate-limit header leaves in the state
/// is a count of requests and a real time, or nothing.
///
/// Input: lines `name: value`; the first line is the status.
public enum Headers {
    nonisolated(unsafe) static let x = XService()
    nonisolated(unsafe) static let graph = GraphService()

    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        let bytes = Array(data)
        let lines = bytes.split(separator: 0x0A, omittingEmptySubsequences: false).map { String(decoding: $0, as: UTF8.self) }
        let status = lines.first.flatMap { Int($0.prefix(3)) } ?? 429
        var headers: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            let value = line[line.index(after: colon)...].drop { $0 == " " }
            headers.append((line[..<colon].lowercased(), String(value)))
        }
        let response = HTTPResponse(status: status, headers: headers, body: [])
        let now = Clock.wall()

        if let wait = response.retryAfter(now: now) {
            require(wait >= 0 && !wait.isNaN, "Retry-After \(escaped(Array((response.header("retry-after") ?? "").utf8))) waits \(wait)")
        }
        for (_, value) in headers {
            if let seconds = Clock.seconds(value) {
                require(seconds >= 0 && !seconds.isNaN, "Clock.seconds reads \(escaped(Array(value.utf8))) as \(seconds)")
                roundTrip(seconds)
            }
            if let epoch = Clock.epoch(httpDate: value) { roundTrip(Double(epoch)) }
            if let epoch = Clock.epoch(iso8601: value) { roundTrip(Double(epoch)) }
            if let number = Double(value) { roundTrip(number) }
        }

        for service in [x, graph] as [APIService] {
            var state = RateLimitState()
            service.readRateLimits(response, into: &state)
            for (name, time) in [("reset", state.reset), ("cap reset", state.capReset)] {
                guard let time else { continue }
                _ = Clock.iso8601(time)
                _ = state.windowExhaustedUntil(now)
                _ = state.capExhaustedUntil(now)
                // +infinity is allowed: a reset past any date, never waited for.
                require(!time.isNaN && time >= 0, "\(type(of: service)) leaves a \(name) of \(time)")
            }
            for (name, count) in [("remaining", state.remaining), ("cap remaining", state.capRemaining)] {
                guard let count else { continue }
                require(count >= 0, "\(type(of: service)) leaves \(name) \(count)")
            }
            if let spacing = state.spacing {
                require(spacing >= 0 && spacing.isFinite, "\(type(of: service)) spaces requests by \(spacing)")
            }
        }
    }

    /// A time is written as ISO 8601 when it is one, and reads back as the same second.
    static func roundTrip(_ epoch: Double) {
        guard let text = Clock.iso8601(epoch) else {
            require(!(epoch >= 0 && epoch <= Clock.latestEpoch), "Clock.iso8601 cannot write \(epoch), a time it should")
            return
        }
        require(epoch >= 0 && epoch <= Clock.latestEpoch, "Clock.iso8601 writes \(epoch) as \(text)")
        require(Clock.epoch(iso8601: text) == Int64(epoch), "\(epoch) written as \(text) reads back as \(Clock.epoch(iso8601: text) ?? -1)")
    }
}
