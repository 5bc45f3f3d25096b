/// An amount in US dollars, kept in millionths so that prices add up
/// exactly: a thousand posts at 0.015 cost 15, not 14.999999999999.
public struct Money: Comparable, Hashable, Sendable {
    public var micros: Int64

    public init(micros: Int64) {
        self.micros = micros
    }

    public static let zero = Money(micros: 0)
    /// The most any price or budget may be: a billion dollars, so that a
    /// price times a page of accounts cannot overflow.
    public static let most = Money(micros: 1_000_000_000 * 1_000_000)

    /// A plain non-negative decimal (`0.015`, `2`, `.5`), places past the
    /// sixth dropped; nil for anything else or more than `most`.
    public init?(decimal text: String) {
        var micros: Int64 = 0
        var places = -1
        var digits = 0
        for byte in text.utf8 {
            if byte == UInt8(ascii: ".") {
                guard places < 0 else { return nil }
                places = 0
                continue
            }
            guard (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(byte) else { return nil }
            digits += 1
            if places >= 6 { continue }
            if places >= 0 { places += 1 }
            micros = micros * 10 + Int64(byte - UInt8(ascii: "0"))
            guard micros <= Self.most.micros else { return nil }
        }
        guard digits > 0 else { return nil }
        for _ in 0..<(6 - max(places, 0)) { micros *= 10 }
        guard micros <= Self.most.micros else { return nil }
        self.micros = micros
    }

    /// A JSON number that is a non-negative amount up to `most`, rounded to the millionth.
    public init?(_ value: JSON) {
        guard value.kind == .integer || value.kind == .real, let number = value.number,
              number >= 0, number <= Double(Self.most.micros / 1_000_000) else { return nil }
        micros = Int64((number * 1_000_000).rounded())
    }

    public static func < (lhs: Money, rhs: Money) -> Bool { lhs.micros < rhs.micros }
    public static func + (lhs: Money, rhs: Money) -> Money { Money(micros: lhs.micros + rhs.micros) }
    public static func - (lhs: Money, rhs: Money) -> Money { Money(micros: lhs.micros - rhs.micros) }
    public static func += (lhs: inout Money, rhs: Money) { lhs.micros += rhs.micros }
    public static func -= (lhs: inout Money, rhs: Money) { lhs.micros -= rhs.micros }
    public static func * (lhs: Money, count: Int) -> Money { Money(micros: lhs.micros * Int64(count)) }

    /// `$0.075`: dollars with three decimals, the last rounded half up.
    public var dollars: String {
        let thousandths = (micros + 500) / 1000
        let cents = thousandths % 1000
        let fraction = String(cents)
        return "$\(thousandths / 1000)." + String(repeating: "0", count: 3 - fraction.utf8.count) + fraction
    }

    /// `$0.0035`, `$0.200`: at least three decimals, more when it has them.
    public var exactDollars: String {
        var fraction = String(micros % 1_000_000)
        fraction = String(repeating: "0", count: 6 - fraction.utf8.count) + fraction
        while fraction.utf8.count > 3 && fraction.hasSuffix("0") { fraction.removeLast() }
        return "$\(micros / 1_000_000)." + fraction
    }

    /// As a JSON number: `0.015`, `0.2`, `12`, `0`.
    public func append(to output: ByteBuffer) {
        output.appendDecimal(micros / 1_000_000)
        var fraction = micros % 1_000_000
        guard fraction > 0 else { return }
        output.append(UInt8(ascii: "."))
        var place: Int64 = 100_000
        while fraction > 0 {
            output.append(UInt8(ascii: "0") + UInt8(fraction / place))
            fraction %= place
            place /= 10
        }
    }
}
