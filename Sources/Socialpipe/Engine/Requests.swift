/// The engine's requests on their way: queued in input order, admitted by
/// the `RateLimiter`, sent (a batch gathered first), and each transfer's
/// outcome read (through its service and the rate limiter, with its `-v`
/// line) and decided by the `ResponsePolicy`: the answer goes to the jobs
/// waiting (shared, or split among a batch's requests), or the request goes
/// again (after a backoff, or at its window's reset), or it ends.
extension Engine {
    /// Puts `exchange` among the requests to send, in input order.
    func queue(_ exchange: Exchange) {
        let position = ready.firstIndex { $0.order > exchange.order } ?? ready.count
        ready.insert(exchange, at: position)
    }

    /// Sends what may go now, in input order, as far as `--parallel`, the
    /// rate limits and the gathering of batches allow.
    func startExchanges() {
        guard interruption == nil else { return }
        let now = Moment.now()
        var heldKeys = Set<String>()
        var index = 0
        while index < ready.count && inFlight.count < settings.parallel {
            let exchange = ready[index]
            let key = exchange.spec.rateLimitKey
            if heldKeys.contains(key) {
                index += 1
                continue
            }
            // What the run cannot pay for ends now, rather than after a wait for its rate limit.
            if !exchange.admitted {
                switch reserve(&exchange.spec, for: exchange.jobs.first) {
                case .success(let reservation):
                    exchange.admitted = true
                    exchange.reservation = reservation
                case .failure(let error):
                    ready.remove(at: index)
                    failExchange(exchange, error)
                    continue
                }
            }
            let waitsAlone = exchange.waitIsTheJobs && exchange.spec.request.idempotent
            switch limiter.admit(key, notBefore: exchange.notBefore, waitsAlone: waitsAlone, at: now) {
            case .fail(let error):
                ready.remove(at: index)
                failExchange(exchange, error)
                continue
            case .hold(let holdsKey):
                if holdsKey { heldKeys.insert(key) }
                index += 1
                continue
            case .go:
                break
            }
            if let gathering, gathering.waitsForCompanions(exchange, in: ready, from: index + 1, input: input,
                                                           interrupted: interruption != nil, now: now.monotonic) {
                index += 1
                continue
            }
            ready.remove(at: index)
            send(gathering?.gather(exchange, from: &ready, at: index, now: now.monotonic) ?? exchange)
        }
    }

    /// Reserves what `spec` may cost (a page may be cut to what the budget
    /// pays for), drawing first on what `payer`, the job it is sent for,
    /// reserved before: what the request holds, or why it may not go.
    func reserve(_ spec: inout RequestSpec, for payer: Tracked?) -> Result<Money, RecordError> {
        switch spending.admit(&spec, ahead: payer?.reservedAhead ?? .zero) {
        case .go(let reserved, let aheadChange):
            payer?.reservedAhead += aheadChange
            return .success(reserved)
        case .fail(let error):
            return .failure(error)
        }
    }

    /// What `exchange`'s `result` costs the run: a success its price (a
    /// page's per item, shared out by the job from the answer), a post that
    /// may have been applied what it reserved, any other failure nothing.
    /// The job that sent it is charged.
    func settleCost(_ exchange: Exchange, _ result: Result<Answer, RecordError>) -> Result<Answer, RecordError> {
        let reservation = exchange.reservation
        exchange.reservation = .zero
        let payer = exchange.jobs.first?.job.reply
        switch result {
        case .success(var answer):
            guard let price = exchange.spec.price, exchange.admitted else { return result }
            let (units, amount) = price.charged(answer)
            spending.charge(amount, releasing: reservation)
            if price.listed != nil {
                answer.charged = (units, price.each)
            } else {
                payer?.charge(amount)
            }
            return .success(answer)
        case .failure(let error):
            if error.kind == .billing { spending.stop(exchange.spec.service, error) }
            if error.kind == .ambiguous && reservation > .zero {
                spending.charge(reservation, releasing: reservation)
                payer?.charge(reservation)
            } else {
                spending.release(reservation)
            }
            return result
        }
    }

    /// The request as it goes out, signed afresh for this attempt.
    func sign(_ spec: RequestSpec) throws(RecordError) -> HTTPRequest {
        var request = spec.request
        try spec.authorizer?.authorize(&request)
        return request
    }

    /// Signs and starts `exchange`: an attempt for every job waiting for it.
    func send(_ exchange: Exchange) {
        let request: HTTPRequest
        do throws(RecordError) {
            request = try sign(exchange.spec)
        } catch {
            failExchange(exchange, error)
            return
        }
        let id = nextID
        nextID += 1
        guard transport.start(request, id: id) else {
            failExchange(exchange, RecordError(.network, "could not create a transfer"))
            return
        }
        exchange.countAttempt()
        exchange.request = request
        inFlight[id] = exchange
        limiter.sent(exchange.spec.rateLimitKey, at: Clock.monotonic())
        if settings.verbose {
            Diagnostics.say(RequestDescription.sentLine(method: request.method, url: request.url,
                                                        parameters: exchange.spec.service.secretParameters))
        }
    }

    // MARK: Outcomes

    /// Takes in how transfer `id` ended.
    func conclude(_ id: Int, _ outcome: TransferOutcome, elapsed: Double) {
        guard let exchange = inFlight.removeValue(forKey: id), let request = exchange.request else { return }
        func sayFailed(_ message: String) {
            if settings.verbose {
                Diagnostics.say(RequestDescription.failedLine(method: request.method, url: request.url, message: message, elapsed: elapsed,
                                                              parameters: exchange.spec.service.secretParameters))
            }
        }
        switch outcome {
        case .failure(let message, let requestSent, let lasting, let status):
            sayFailed(message)
            apply(policy.decide(failure: message, requestSent: requestSent, lasting: lasting, status: status, situation(of: exchange)),
                  to: exchange)
        case .response(let response):
            judge(response, to: exchange, verboseAfter: settings.verbose ? (request, elapsed) : nil)
        case .tooLarge(let status, let limit):
            let message = ResponsePolicy.tooLong(status: status, limit: limit)
            sayFailed(message)
            apply(ResponsePolicy.unreadable(status: status, message, idempotent: exchange.spec.request.idempotent), to: exchange)
        }
    }

    /// What the policy needs to know of `exchange` and the run.
    func situation(of exchange: Exchange) -> ResponsePolicy.Situation {
        ResponsePolicy.Situation(idempotent: exchange.spec.request.idempotent, attempts: exchange.attempts,
                                 interrupted: interruption != nil, now: Clock.wall())
    }

    /// What `response` means for `exchange`, as its API's service and the
    /// policy see it; with `verboseAfter`, the response's `-v` line once that is known.
    func judge(_ response: HTTPResponse, to exchange: Exchange, verboseAfter sent: (HTTPRequest, Double)? = nil) {
        let rateLimit = limiter.read(response, of: exchange.spec)
        let body = ResponseBody(response.body)
        let verdict = ResponsePolicy.verdict(on: response, body: body, of: exchange.spec)
        if let (request, elapsed) = sent {
            Diagnostics.say(RequestDescription.verboseLine(status: response.status, method: request.method, url: request.url,
                                                           elapsed: elapsed, detail: exchange.spec.service.verboseDetail(response),
                                                           error: verdict.error, parameters: exchange.spec.service.secretParameters))
        }
        var situation = situation(of: exchange)
        situation.rateLimit = rateLimit
        apply(policy.decide(verdict, of: response, body: body, situation), to: exchange)
    }

    /// Carries out the policy's decision for `exchange`.
    func apply(_ decision: ResponsePolicy.Decision, to exchange: Exchange) {
        switch decision {
        case .done(let answer):
            if let streamed = exchange.spec.request.streamedBody { uploadDone += streamed.length }
            answered(exchange, .success(answer))
        case .retry(let seconds):
            exchange.backOff(after: seconds, now: Clock.monotonic())
            queue(exchange)
        case .waitForReset:
            exchange.notBefore = 0
            queue(exchange)
        case .giveUp(let error, _) where renewsCredentials(exchange, after: error):
            break
        case .giveUp(let error, let stopsCredentials):
            if stopsCredentials { limiter.giveUp(exchange.spec.rateLimitKey) }
            failExchange(exchange, explained(error, of: exchange))
        case .ambiguous(let error):
            failExchange(exchange, error)
        }
    }

    /// Hands a final result to every job waiting for `exchange`; a batch's
    /// answer is shared out among its requests.
    func answered(_ exchange: Exchange, _ result: Result<Answer, RecordError>) {
        let result = settleCost(exchange, result)
        if exchange.isPrerequisite {
            settled(exchange, result)
            return
        }
        shared.answered(exchange, result)
        if !exchange.members.isEmpty, let gathering, case .success(let answer) = result {
            for (member, part) in gathering.split(answer, of: exchange, interrupted: interruption != nil) {
                switch part {
                case .answered(let response): judge(response, to: member)
                case .sendAgain:
                    member.notBefore = 0
                    queue(member)
                case .ends(let decision): apply(decision, to: member)
                }
            }
            return
        }
        if !exchange.members.isEmpty {
            for member in exchange.members { answered(member, result) }
            return
        }
        for tracked in exchange.jobs { deliveries.append((tracked, result)) }
    }

    /// `error` with what the user can do about it: an `auth` or `permission`
    /// error ends with the command its authorizer says fixes it; a request
    /// that found no server says which API base it tried.
    func explained(_ error: RecordError, of exchange: Exchange) -> RecordError {
        var error = error
        switch error.kind {
        case .auth, .permission:
            if let remedy = exchange.spec.authorizer?.remedy(for: error, of: exchange.spec.request) {
                error.message += "; " + remedy
            }
        case .network where error.status == nil:
            if let base = exchange.spec.service.baseDescription { error.message += " (API base \(base))" }
        default:
            break
        }
        return error
    }

    func failExchange(_ exchange: Exchange, _ error: RecordError) {
        answered(exchange, .failure(error))
    }
}
