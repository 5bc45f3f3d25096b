import Glibc

/// Time for timers and rate limits.
public enum Clock {
    /// Seconds on the monotonic clock, for intervals.
    public static func monotonic() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_MONOTONIC, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// Seconds since the Unix epoch, for rate-limit reset times.
    public static func wall() -> Double {
        var now = timespec()
        clock_gettime(CLOCK_REALTIME, &now)
        return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
    }

    /// `2026-12-02T10:15:00Z` for an epoch second.
    public static func iso8601(_ epoch: Double) -> String {
        var seconds = time_t(epoch)
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        return "\(parts.tm_year + 1900)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// The epoch second of `2026-12-24T10:00:00Z`, `…T10:00+01:00` or
    /// `…T10:00:00.5-0500` (ISO 8601, date and time, with a zone); nil for
    /// anything else. Fractions of a second are dropped.
    public static func epoch(iso8601 text: String) -> Int64? {
        var bytes = Array(text.utf8)[...]
        func number(_ count: Int) -> Int32? {
            guard bytes.count >= count, bytes.prefix(count).allSatisfy({ (0x30...0x39).contains($0) }) else { return nil }
            let value = bytes.prefix(count).reduce(Int32(0)) { $0 * 10 + Int32($1 - 0x30) }
            bytes = bytes.dropFirst(count)
            return value
        }
        func skip(_ byte: UInt8) -> Bool {
            guard bytes.first == byte else { return false }
            bytes = bytes.dropFirst()
            return true
        }
        guard let year = number(4), skip(0x2D), let month = number(2), skip(0x2D), let day = number(2),
              skip(0x54) || skip(0x74) || skip(0x20), let hour = number(2), skip(0x3A), let minute = number(2) else { return nil }
        var second: Int32 = 0
        if skip(0x3A) {
            guard let value = number(2) else { return nil }
            second = value
            if skip(0x2E) || skip(0x2C) {
                guard bytes.first.map({ (0x30...0x39).contains($0) }) == true else { return nil }
                while let digit = bytes.first, (0x30...0x39).contains(digit) { bytes = bytes.dropFirst() }
            }
        }
        var offset: Int32 = 0
        if skip(0x5A) || skip(0x7A) {
            offset = 0
        } else if let sign = bytes.first, sign == 0x2B || sign == 0x2D {
            bytes = bytes.dropFirst()
            guard let hours = number(2) else { return nil }
            _ = skip(0x3A)
            guard let minutes = number(2), hours <= 23, minutes <= 59 else { return nil }
            offset = (hours * 60 + minutes) * 60 * (sign == 0x2D ? -1 : 1)
        } else {
            return nil
        }
        guard bytes.isEmpty, (1...12).contains(month), (1...31).contains(day), hour <= 23, minute <= 59, second <= 60 else {
            return nil
        }
        var parts = tm()
        parts.tm_year = year - 1900
        parts.tm_mon = month - 1
        parts.tm_mday = day
        parts.tm_hour = hour
        parts.tm_min = minute
        parts.tm_sec = second
        let epoch = timegm(&parts)
        // timegm normalises 31 February into March: such a date does not exist.
        guard parts.tm_mday == day, parts.tm_mon == month - 1 else { return nil }
        return Int64(epoch) - Int64(offset)
    }
}
