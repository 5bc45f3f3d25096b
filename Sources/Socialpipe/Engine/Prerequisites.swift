/// A request credentials need answered before they can sign (an OAuth 2.0
/// refresh): the engine sends it as an exchange of its own, once for every
/// request that waits on it, and hands its outcome back here.
public protocol CredentialPrerequisite: AnyObject {
    /// What to send.
    var request: RequestSpec { get }
    /// Takes in what the answer brings (a new token); a thrown error ends
    /// every request that waited.
    func taken(_ answer: Answer) throws(RecordError)
    /// The request failed with `error`: the error the waiting requests end with.
    func failed(_ error: RecordError) -> RecordError
}

/// The prerequisites on their way and the exchanges waiting for them.
final class Prerequisites {
    /// One prerequisite's own exchange and the exchanges it holds up.
    final class Pending {
        let prerequisite: CredentialPrerequisite
        let exchange: Engine.Exchange
        var waiting: [Engine.Exchange] = []
        init(_ prerequisite: CredentialPrerequisite, exchange: Engine.Exchange) {
            self.prerequisite = prerequisite
            self.exchange = exchange
        }
    }

    private var pending: [ObjectIdentifier: Pending] = [:]

    /// Puts `exchange` behind `prerequisite`; returns the prerequisite's
    /// exchange when it is new (to be sent). The jobs waiting count its
    /// requests as theirs, as a job sharing a request does.
    func wait(_ exchange: Engine.Exchange, for prerequisite: CredentialPrerequisite) -> Engine.Exchange? {
        let key = ObjectIdentifier(prerequisite)
        if let known = pending[key] {
            for tracked in exchange.allJobs { tracked.attempts += known.exchange.attempts }
            known.waiting.append(exchange)
            known.exchange.jobs += exchange.allJobs
            return nil
        }
        let own = Engine.Exchange(spec: prerequisite.request, order: exchange.order, jobs: exchange.allJobs)
        own.isPrerequisite = true
        let entry = Pending(prerequisite, exchange: own)
        entry.waiting.append(exchange)
        pending[key] = entry
        return own
    }

    /// The exchanges `exchange` (a prerequisite's) held up, and its prerequisite, now that it is over.
    func settle(_ exchange: Engine.Exchange) -> Pending? {
        guard let key = pending.first(where: { $0.value.exchange === exchange })?.key else { return nil }
        return pending.removeValue(forKey: key)
    }

    /// Every prerequisite not sent yet, with what waits on it (an interruption ends them).
    func unsent(_ isUnsent: (Engine.Exchange) -> Bool) -> [Pending] {
        let found = pending.filter { isUnsent($0.value.exchange) }
        for key in found.keys { pending.removeValue(forKey: key) }
        return Array(found.values)
    }
}
