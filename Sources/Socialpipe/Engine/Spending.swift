/// What a request costs, as its API's service prices it: `each` per unit,
/// at most `units` of them. A success is charged one unit, or, when the
/// price counts the elements of the answer's `listed` member (a page priced
/// per item returned), one per element. A failed request costs nothing.
public struct Price {
    public var each: Money
    public var units: Int
    /// The answer's top-level list whose elements are the units charged.
    public var listed: StaticString?
    /// Asks for fewer units (`units` from 1 up): set for a page, so that a
    /// page asks for no more items than the budget left pays for.
    public var fitting: ((inout HTTPRequest, Int) -> Void)?
    /// What the record's later priced requests may cost, reserved with this
    /// one, so that a record is not half sent when the budget runs out.
    public var andLater = Money.zero

    public init(each: Money, units: Int = 1, listed: StaticString? = nil, fitting: ((inout HTTPRequest, Int) -> Void)? = nil) {
        self.each = each
        self.units = units
        self.listed = listed
        self.fitting = fitting
    }

    /// The most this request may cost.
    public var most: Money { each * units }

    /// What `answer` is charged: one unit, or one per element listed.
    func charged(_ answer: Answer) -> (units: Int, amount: Money) {
        guard let listed else { return (1, each) }
        let count = answer.body.elements(of: listed).count
        return (count, each * count)
    }
}

/// What a run spends: the most of each priced request is reserved before it
/// is sent, within the budget (`--max-cost`) when there is one, and becomes
/// its real price when the answer comes. A request the budget cannot pay
/// for is not sent (`budget`); once an API refuses for its billing, no
/// later request to it is sent (`billing`).
final class Spending {
    /// The most the run may spend; nil for no limit.
    let budget: Money?
    /// Charged so far (an estimate: the API's own figure may be lower).
    private(set) var charged = Money.zero
    /// Reserved for requests on their way and the records that sent them.
    private(set) var reserved = Money.zero
    /// Whether a priced request was sent (or shown in a dry run).
    private(set) var anyPriced = false
    /// Whether the budget refused a request: later priced ones are refused too.
    private var exhausted = false
    /// The refusal that stopped each API (by its service's identity).
    private var stopped: [ObjectIdentifier: RecordError] = [:]

    init(budget: Money?) {
        self.budget = budget
    }

    /// What the budget has left for new reservations.
    var left: Money? { budget.map { $0 - charged - reserved } }

    /// Whether a request may go, and what it reserved.
    enum Admission {
        /// It goes, `reserved` held for it (a page cut to what the budget
        /// pays for holds less than its price's most); what its record holds
        /// for its later requests changes by `aheadChange`.
        case go(reserved: Money, aheadChange: Money)
        case fail(RecordError)
    }

    /// Whether `spec` may be sent, reserving what it may cost; `ahead` is
    /// what its record reserved before for it.
    func admit(_ spec: inout RequestSpec, ahead: Money) -> Admission {
        if let refusal = stopped[ObjectIdentifier(spec.service)] {
            return .fail(RecordError(.billing, "not sent: an earlier request of this run was refused for billing ("
                                     + refusal.message + ")"))
        }
        guard let price = spec.price else { return .go(reserved: .zero, aheadChange: .zero) }
        let priced = price.most > .zero || price.andLater > .zero
        if price.andLater == .zero && ahead >= price.most {
            // The record reserved it with an earlier request.
            if priced { anyPriced = true }
            return .go(reserved: price.most, aheadChange: .zero - price.most)
        }
        let needed = price.most + price.andLater - ahead
        if let budget, exhausted && priced {
            return .fail(RecordError(.budget, "not sent: --max-cost \(budget.exactDollars) ran out earlier in this run"))
        }
        guard let left, needed > left else {
            if priced { anyPriced = true }
            reserved += needed
            return .go(reserved: price.most, aheadChange: price.andLater - ahead)
        }
        if let fit = price.fitting, price.each > .zero, ahead == .zero {
            let units = Int(left.micros / price.each.micros)
            if units >= 1 {
                anyPriced = true
                fit(&spec.request, units)
                spec.price?.units = units
                reserved += price.each * units
                return .go(reserved: price.each * units, aheadChange: .zero)
            }
        }
        // Once the budget refuses a request, every later one that has a price is refused too.
        exhausted = true
        return .fail(Self.overBudget(needed: needed, left: left, budget: budget ?? .zero))
    }

    /// The error of a request the budget cannot pay for.
    static func overBudget(needed: Money, left: Money, budget: Money) -> RecordError {
        RecordError(.budget, "not sent: it may cost \(needed.exactDollars), and of --max-cost \(budget.exactDollars) "
                    + "\(max(left, .zero).exactDollars) is left")
    }

    /// A request that held `reservation` was charged `amount` (what it held, for one that may have been applied).
    func charge(_ amount: Money, releasing reservation: Money) {
        reserved -= reservation
        charged += amount
    }

    /// What was reserved and will not be spent goes back to the budget.
    func release(_ reservation: Money) {
        reserved -= reservation
    }

    /// `error`, an API's refusal for its billing: no later request to
    /// `service` is sent.
    func stop(_ service: APIService, _ error: RecordError) {
        stopped[ObjectIdentifier(service)] = stopped[ObjectIdentifier(service)] ?? error
    }
}
