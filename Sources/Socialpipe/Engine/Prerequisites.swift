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

/// The engine's side: a request whose credentials need a prerequisite waits
/// for it; its outcome lets them go or ends them; a refusal renews.
extension Engine {
    /// Whether `exchange` waits for its credentials' prerequisite (a token's
    /// refresh), sent first; or ended because that could not be asked for.
    /// Asked when a job asks for the request, as the job's own step would.
    func awaitsPrerequisite(_ exchange: Exchange) -> Bool {
        guard !exchange.isPrerequisite, let authorizer = exchange.spec.authorizer else { return false }
        do throws(RecordError) {
            guard let prerequisite = try authorizer.prerequisite() else { return false }
            if let own = prerequisites.wait(exchange, for: prerequisite) { queue(own) }
        } catch {
            failExchange(exchange, error)
        }
        return true
    }

    /// A prerequisite's outcome: the requests that waited go on (and sign
    /// with what it brought), or end with the error its credentials give.
    func settled(_ exchange: Exchange, _ result: Result<Answer, RecordError>) {
        guard let pending = prerequisites.settle(exchange) else { return }
        var failure: RecordError?
        switch result {
        case .success(let answer):
            do throws(RecordError) { try pending.prerequisite.taken(answer) } catch { failure = error }
        case .failure(let error):
            failure = pending.prerequisite.failed(error)
        }
        for waiting in pending.waiting {
            if let failure {
                failExchange(waiting, failure)
            } else if interruption != nil {
                for tracked in waiting.allJobs { fail(tracked, cancelledBeforeSending(tracked)) }
            } else {
                queue(waiting)
            }
        }
    }

    /// A request refused for its credentials (a 401) goes again once per
    /// job when its authorizer renews them (after its prerequisite, a refresh).
    func renewsCredentials(_ exchange: Exchange, after error: RecordError) -> Bool {
        guard interruption == nil, exchange.members.isEmpty, let request = exchange.request,
              let authorizer = exchange.spec.authorizer, !exchange.jobs.contains(where: \.renewedCredentials),
              authorizer.renews(after: error, of: request) else { return false }
        for tracked in exchange.jobs { tracked.renewedCredentials = true }
        exchange.attempts = 0
        exchange.notBefore = 0
        if !awaitsPrerequisite(exchange) { queue(exchange) }
        return true
    }

    /// An interruption: prerequisites not sent yet let go of what they hold
    /// (a credentials file's lock), and the requests waiting end `cancelled`.
    func cancelUnsentPrerequisites() {
        for pending in prerequisites.unsent({ exchange in !inFlight.values.contains { $0 === exchange } }) {
            _ = pending.prerequisite.failed(RecordError(.cancelled, "interrupted"))
            for waiting in pending.waiting {
                for tracked in waiting.allJobs { fail(tracked, cancelledBeforeSending(tracked)) }
            }
        }
    }
}
