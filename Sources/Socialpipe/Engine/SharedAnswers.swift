/// Requests sent once for every job that asks for the same thing (the same
/// `RequestSpec.Sharing` key): a job asking while one is on its way joins
/// it, and one asking after an answer kept for the run takes that answer.
/// Either way the job counts the requests that answer took.
struct SharedAnswers {
    /// Requests on their way (not yet answered), by sharing key.
    private var onTheirWay: [String: Engine.Exchange] = [:]
    /// Answers kept for the run, by sharing key, with the requests they took.
    private var kept: [String: (result: Result<Answer, RecordError>, attempts: Int)] = [:]

    /// What a job asking for a shared request gets, when not nothing (it
    /// then sends the request itself, `sending`).
    enum Joining {
        /// An answer kept for the run, to hand over now.
        case kept(Result<Answer, RecordError>)
        /// A place among the jobs of the request already on its way.
        case joined
    }

    /// `tracked` asks for the request shared under `key`.
    mutating func join(_ tracked: Engine.Tracked, key: String) -> Joining? {
        if let answer = kept[key] {
            tracked.attempts += answer.attempts
            return .kept(answer.result)
        }
        if let exchange = onTheirWay[key] {
            tracked.attempts += exchange.attempts
            exchange.jobs.append(tracked)
            return .joined
        }
        return nil
    }

    /// `exchange` goes out for its jobs: later ones asking the same join it.
    mutating func sending(_ exchange: Engine.Exchange) {
        if let key = exchange.spec.sharing?.key { onTheirWay[key] = exchange }
    }

    /// `exchange` has its final result: no one joins it any more, and the
    /// result is kept for the run when its sharing says so.
    mutating func answered(_ exchange: Engine.Exchange, _ result: Result<Answer, RecordError>) {
        guard let sharing = exchange.spec.sharing else { return }
        onTheirWay.removeValue(forKey: sharing.key)
        if sharing.keepAnswer { kept[sharing.key] = (result, exchange.attempts) }
    }

    /// The run is abandoned: nothing is on its way any more.
    mutating func removeAll() {
        onTheirWay.removeAll()
    }
}
