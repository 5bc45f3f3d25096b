/// What the rate-limit headers of one endpoint and credential say (X's
/// `x-rate-limit-*` and the 24-hour posting headers). A missing header
/// means unknown, never zero.
struct RateLimitState {
    var remaining: Int?
    var reset: Double?
    var dailyRemaining: Int?
    var dailyReset: Double?

    /// Takes in the headers of a response.
    mutating func update(from response: HTTPResponse) {
        if let value = response.header("x-rate-limit-remaining").flatMap({ Int($0) }) { remaining = value }
        if let value = response.header("x-rate-limit-reset").flatMap({ Double($0) }) { reset = value }
        var daily: [(Int, Double?)] = []
        for scope in ["user", "app"] {
            if let value = response.header("x-\(scope)-limit-24hour-remaining").flatMap({ Int($0) }) {
                daily.append((value, response.header("x-\(scope)-limit-24hour-reset").flatMap { Double($0) }))
            }
        }
        if let tightest = daily.min(by: { $0.0 < $1.0 }) {
            dailyRemaining = tightest.0
            dailyReset = tightest.1
        }
    }

    /// The end of a 24-hour exhaustion still in force at `now`, if any.
    func dailyExhaustedUntil(_ now: Double) -> Double? {
        guard dailyRemaining == 0, let dailyReset, dailyReset > now else { return nil }
        return dailyReset
    }

    /// The end of a 15-minute-window exhaustion still in force at `now`, if any.
    func windowExhaustedUntil(_ now: Double) -> Double? {
        guard remaining == 0, let reset, reset > now else { return nil }
        return reset
    }
}
