/// What an API's rate-limit headers say about one endpoint and credential:
/// a short window (minutes, or a time until access is regained) and a long
/// cap (a day). Filled by the API's `APIService`; a missing header means
/// unknown, never zero.
public struct RateLimitState: Sendable {
    /// Requests left in the current window, and when it resets (epoch seconds).
    public var remaining: Int?
    public var reset: Double?
    /// Requests left under the long cap, and when it resets.
    public var capRemaining: Int?
    public var capReset: Double?
    /// The least time between two requests (seconds) while usage runs close
    /// to the limit (as the service judges it); nil when requests need no spacing.
    public var spacing: Double?

    public init() {}

    /// The end of a cap exhaustion still in force at `now`, if any.
    func capExhaustedUntil(_ now: Double) -> Double? {
        guard capRemaining == 0, let capReset, capReset > now else { return nil }
        return capReset
    }

    /// The end of a window exhaustion still in force at `now`, if any.
    func windowExhaustedUntil(_ now: Double) -> Double? {
        guard remaining == 0, let reset, reset > now else { return nil }
        return reset
    }
}
