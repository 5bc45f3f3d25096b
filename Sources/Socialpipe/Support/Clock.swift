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

    /// The last second ISO 8601's four-digit years can write, 9999-12-31T23:59:59Z.
    public static let latestEpoch = 253_402_300_799.0

    /// `2026-12-02T10:15:00Z` for an epoch second from 1970 to `latestEpoch`;
    /// nil for any other number. Times come from servers and files, and
    /// `time_t(1e300)` would trap.
    public static func iso8601(_ epoch: Double) -> String? {
        guard epoch >= 0 && epoch <= latestEpoch else { return nil }
        var seconds = time_t(epoch)
        var parts = tm()
        guard gmtime_r(&seconds, &parts) != nil else { return nil }
        func two(_ value: Int32) -> String { value < 10 ? "0\(value)" : "\(value)" }
        let year = parts.tm_year + 1900
        let digits = year < 10 ? "000" : year < 100 ? "00" : year < 1000 ? "0" : ""
        return "\(digits)\(year)-\(two(parts.tm_mon + 1))-\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour)):\(two(parts.tm_min)):\(two(parts.tm_sec))Z"
    }

    /// A count of seconds as an API writes it in a header or an answer
    /// (`Retry-After: 120`, a window's reset `1764580000`): digits, with
    /// perhaps a fraction and an exponent, or `inf`. Nil for anything else:
    /// a sign, NaN, hexadecimal, text. A number too large to be a time comes
    /// out as it is (up to +infinity): it is never a date (`iso8601` is nil)
    /// and always beyond any wait's limit, so it cannot be waited for.
    public static func seconds<Text: StringProtocol>(_ text: Text) -> Double? {
        let lowered = text.lowercased()
        if lowered == "inf" || lowered == "infinity" { return .infinity }
        var digits = 0
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "."), UInt8(ascii: "e"), UInt8(ascii: "E"), UInt8(ascii: "+"), UInt8(ascii: "-"): break
            default: return nil
            }
        }
        guard digits > 0, text.first.map({ $0 != "-" && $0 != "+" }) ?? false,
              let value = Double(String(text)), !value.isNaN, value >= 0 else { return nil }
        return value
    }

    /// When a lifetime read from an answer (`expires_in`) ends: `now` plus
    /// `seconds` when that is a date `iso8601` can write; nil (no known
    /// expiry) for a lifetime that is not positive, or so long that the
    /// token outlives any date (it is then used until the API refuses it).
    public static func expiry(afterSeconds seconds: Double?, now: Double) -> Double? {
        guard let seconds, seconds > 0, now + seconds <= latestEpoch else { return nil }
        return now + seconds
    }

    /// The epoch second of an HTTP-date in its preferred form, IMF-fixdate
    /// (`Sun, 06 Nov 1994 08:49:37 GMT`, RFC 9110 §5.6.7); nil for anything else.
    public static func epoch(httpDate text: String) -> Int64? {
        let words = text.split(separator: " ", omittingEmptySubsequences: false)
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard words.count == 6, words[0].count == 4, words[0].hasSuffix(","), words[1].count == 2, words[3].count == 4,
              words[4].count == 8, words[5] == "GMT", let month = months.firstIndex(of: String(words[2])) else { return nil }
        let number = month + 1 < 10 ? "0\(month + 1)" : "\(month + 1)"
        return epoch(iso8601: "\(words[3])-\(number)-\(words[1])T\(words[4])Z")
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
