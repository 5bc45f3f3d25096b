/// A tool's own count of its work, shown on the progress line instead of
/// the records done (`12,000 accounts (page 13)`): for a tool whose one
/// record may take a long run, a count of records would stand still.
public struct WorkProgress {
    public var count: Int
    /// The unit counted, singular and plural: ("account", "accounts").
    public var unit: (one: String, many: String)
    /// Where the work is, in parentheses after the count (`page 13`).
    public var detail: String?

    public init(count: Int, unit: (one: String, many: String), detail: String? = nil) {
        self.count = count
        self.unit = unit
        self.detail = detail
    }

    /// `12,000 accounts (page 13)`.
    var description: String {
        var text = "\(Self.grouped(count)) \(count == 1 ? unit.one : unit.many)"
        if let detail { text += " (\(detail))" }
        return text
    }

    /// `count` with its thousands set apart by commas, whatever the locale (`12,000`).
    static func grouped(_ count: Int) -> String {
        let digits = String(count.magnitude)
        var text = count < 0 ? "-" : ""
        for (index, digit) in digits.enumerated() {
            if index > 0 && (digits.count - index) % 3 == 0 { text += "," }
            text.append(digit)
        }
        return text
    }
}
