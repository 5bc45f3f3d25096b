import Socialpipe
import SocialpipeInteractive
import SocialpipeX

/// `tw-auth oauth2`: Authorization Code with PKCE (x-api.md §10). The code
/// lives 30 seconds, so it is exchanged as soon as the redirect brings it.
final class OAuth2Job: ProfileJob<TwitterAuth>, Job {
    private var clientID = ""
    private var clientSecret: String?
    private var verifier = ""
    private var token: JSON?

    func begin() -> JobStep {
        do throws(RecordError) {
            let stored = try auth.profiles.section(profile)?.member("oauth2")
            if let given = auth.clientID ?? stored?[field: "client_id"] ?? Environment.nonEmpty("TW_CLIENT_ID") {
                clientID = given
            } else {
                guard let answer = auth.terminal?.ask("OAuth 2.0 client ID: "), !answer.isEmpty else {
                    throw RecordError(.input, "no client ID: give --client-id, or answer the question")
                }
                clientID = answer
            }
            clientSecret = stored?[field: "client_secret"] ?? Environment.nonEmpty("TW_CLIENT_SECRET")
            if clientSecret == nil {
                let answer = auth.terminal?.ask("Client secret (empty for a public client): ", secret: true) ?? ""
                clientSecret = answer.isEmpty ? nil : answer
            }
            let pkce = XAuthFlows.pkce(auth.crypto)
            verifier = pkce.verifier
            let state = XAuthFlows.base64URL(Crypto.randomBytes(24))
            let query = [("response_type", "code"), ("client_id", clientID), ("redirect_uri", auth.redirect),
                         ("scope", auth.scopes), ("state", state), ("code_challenge", pkce.challenge),
                         ("code_challenge_method", "S256")]
                .map { $0.0 + "=" + PercentEncoding.encoded($0.1) }.joined(separator: "&")
            let listener = auth.pasteRedirect ? nil : try Loopback(redirect: auth.redirect)
            Terminal.show("Open this page, sign in as the account to use, and authorize the app:\n  "
                + XAuthFlows.authorizeBase(apiBase: auth.apiBase) + "/i/oauth2/authorize?" + query)
            let redirected: String
            if let listener {
                Terminal.show("Waiting for the redirect to \(auth.redirect) …")
                redirected = try listener.waitForRedirect(state: state, timeout: 300)
            } else {
                guard let pasted = auth.terminal?.ask("Paste the address your browser was sent to: "), !pasted.isEmpty else {
                    throw RecordError(.auth, "no redirect address given")
                }
                redirected = pasted.firstIndex(of: "?").map { String(pasted[pasted.index(after: $0)...]) } ?? pasted
            }
            let fields = XAuthFlows.form(Array(redirected.utf8))
            guard fields["state"] == state else {
                throw RecordError(.auth, "the redirect's state does not match this request's: not exchanging its code")
            }
            if let error = fields["error"] { throw RecordError(.auth, "authorization refused: \(error)") }
            guard let code = fields["code"], !code.isEmpty else { throw RecordError(.auth, "the redirect carries no code") }
            var form = [Parameter("grant_type", "authorization_code"), Parameter("code", code),
                        Parameter("redirect_uri", auth.redirect), Parameter("code_verifier", verifier)]
            var headers: [String] = []
            if let clientSecret {
                headers.append(OAuth2Token.basicAuthorization(clientID, clientSecret))
            } else {
                form.append(Parameter("client_id", clientID))
            }
            return .send(auth.request("POST", "/2/oauth2/token", form: form, headers: headers,
                                      authorizer: SecretsOf([clientSecret, verifier, code].compactMap { $0 })))
        } catch {
            return .fail(error)
        }
    }

    /// The code exchange refused: the code is spent or expired, so the whole flow starts again.
    private func ending(with error: RecordError) -> RecordError {
        guard token == nil, error.kind == .http || error.kind == .auth else { return error }
        var error = error
        error.kind = .auth
        error.message += " (the authorization code lives 30 seconds and works once: run tw-auth oauth2 again)"
        return error
    }

    private func next(after answer: Answer) -> JobStep {
        if let token {
            ProfileEditor.line(reply, [("profile", .string(profile)), ("method", .string("oauth2")),
                                     ("account", TwitterAuth.account(answer) ?? .null),
                                     ("expires_at", token.member("expires_at") ?? .null),
                                     ("scopes", token.member("scopes") ?? .null), ("credentials", .string(auth.path))])
            return .done
        }
        // Read in place: a number jansson cannot hold must not cost the token.
        let body = answer.body
        guard let access = body.string("access_token"), !access.isEmpty else {
            return .fail(RecordError(.auth, "the token endpoint answered without an access_token", status: answer.status))
        }
        let stored = JSON.object()
        stored.set("client_id", string: clientID)
        if let clientSecret { stored.set("client_secret", string: clientSecret) }
        stored.set("access_token", string: access)
        if let refresh = body.string("refresh_token") { stored.set("refresh_token", string: refresh) }
        if let expiry = Clock.expiry(afterSeconds: body.number("expires_in"), now: Clock.wall()).flatMap(Clock.iso8601) {
            stored.set("expires_at", string: expiry)
        }
        stored.set("scopes", string: body.string("scope") ?? auth.scopes)
        do throws(RecordError) {
            try auth.profiles.store(profile, [("oauth2", stored)])
        } catch {
            return .fail(error)
        }
        token = stored
        let bearer = TwitterCredentials(bearerToken: access, origin: "profile \"\(profile)\"")
        do throws(RecordError) {
            return .send(auth.request("GET", "/2/users/me", authorizer: try XAuthorizer(bearer, crypto: auth.crypto)))
        } catch {
            return .fail(error)
        }
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), ending: ending(with:))
    }
}

/// `tw-auth status`: whether a profile's X credentials work, and as whom.
/// An OAuth 2.0 token is refreshed on the way, as the X tools do it.
final class StatusJob: Job {
    let reply: Reply
    private let auth: TwitterAuth
    private let record: Record
    private let profile: String
    private var method = "none"
    private var authorizer: XAuthorizer?

    init(auth: TwitterAuth, record: Record, profile: String, reply: Reply) {
        self.auth = auth
        self.record = record
        self.profile = profile
        self.reply = reply
    }

    func begin() -> JobStep {
        guard let x = auth.x else { return .fail(RecordError(.auth, "no credentials file")) }
        do throws(RecordError) {
            let authorizer = try x.authorizer(for: record)
            self.authorizer = authorizer
            let credentials = authorizer.credentials
            method = credentials.hasOAuth1 ? "oauth1" : authorizer.session != nil ? "oauth2" : "app"
            // App-only tokens have no account: any user lookup shows whether X takes the token.
            let path = method == "app" ? "/2/users/by/username/XDevelopers" : "/2/users/me"
            return .send(x.request("GET", path, endpoint: "GET " + path, authorizer: authorizer))
        } catch {
            return invalid(error) ?? .fail(error)
        }
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: { answer in
            let access = answer.response.header("x-access-level")
            if access == "read" {
                Diagnostics.say("profile \"\(profile)\": the token is read-only (x-access-level: read), so tw-post cannot post with "
                    + "it: give the app Read and write permission in X's developer console, then run tw-auth pin --access write "
                    + "--profile \(profile) (or tw-auth oauth2 with the tweet.write scope)")
            }
            report(valid: true, account: method == "app" ? nil : TwitterAuth.account(answer), access: access)
            return .done
        }, recovering: invalid)
    }

    /// Not valid is an answer, not a failure of the check: a token refused
    /// (or that could not be refreshed) gets a line saying so.
    private func invalid(_ error: RecordError) -> JobStep? {
        guard error.kind == .auth || (method == "app" && error.kind == .notFound) else { return nil }
        report(valid: error.kind == .notFound, account: nil, problem: error.kind == .auth ? error.message : nil)
        return .done
    }

    private func report(valid: Bool, account: JSON?, access: String? = nil, problem: String? = nil) {
        var members: [(String, JSON)] = [("profile", .string(profile)), ("method", .string(method)), ("valid", .bool(valid))]
        if let account { members.append(("account", account)) }
        // What the token may do, as X says it (`read`, `read-write`, `read-write-directmessages`).
        if let access { members.append(("access", .string(access))) }
        if let session = authorizer?.session {
            members.append(("expires_at", session.expiresAt.flatMap(Clock.iso8601).map { .string($0) } ?? .null))
            members.append(("scopes", session.scopes.map { .string($0) } ?? .null))
        }
        if let problem { members.append(("problem", .string(problem))) }
        ProfileEditor.line(reply, members, failsRun: !valid)
    }
}

/// `tw-auth logout`: revokes what X lets revoke, then removes the profile's
/// X tokens from the file (the app's key and secret stay).
final class LogoutJob: ProfileJob<TwitterAuth>, Job {
    private var revoked: [String] = []
    private var pending: [(String, RequestSpec)] = []

    func begin() -> JobStep {
        do throws(RecordError) {
            guard let section = try auth.profiles.section(profile) else {
                throw RecordError(.auth, "profile \"\(profile)\" has no twitter credentials in \(auth.path)")
            }
            if let oauth2 = section.member("oauth2"), let id = oauth2[field: "client_id"] {
                for field in ["refresh_token", "access_token"] {
                    guard let token = oauth2[field: field] else { continue }
                    var form = [Parameter("token", token)]
                    var headers: [String] = []
                    var secrets = [token]
                    if let secret = oauth2[field: "client_secret"] {
                        headers.append(OAuth2Token.basicAuthorization(id, secret))
                        secrets.append(secret)
                    } else {
                        form.append(Parameter("client_id", id))
                    }
                    pending.append(("oauth2 " + field, auth.request("POST", "/2/oauth2/revoke", form: form, headers: headers,
                                                                   authorizer: SecretsOf(secrets))))
                }
            }
            if let key = section[field: "consumer_key"], let secret = section[field: "consumer_secret"],
               let token = section[field: "access_token"], let tokenSecret = section[field: "access_token_secret"] {
                var signer = XAuthFlows.PINSigner(consumerKey: key, consumerSecret: secret, crypto: auth.crypto)
                signer.token = token
                signer.tokenSecret = tokenSecret
                pending.append(("oauth1", auth.request("POST", "/1.1/oauth/invalidate_token", form: [], authorizer: signer)))
            }
            return next()
        } catch {
            return .fail(error)
        }
    }

    private func next() -> JobStep {
        guard !pending.isEmpty else { return finish() }
        return .send(pending[0].1)
    }

    private func next(after answer: Answer) -> JobStep {
        revoked.append(pending.removeFirst().0)
        return next()
    }

    /// A token X no longer knows is as good as revoked.
    private func recovering(from error: RecordError) -> JobStep? {
        guard !pending.isEmpty, error.kind == .auth || error.kind == .http else { return nil }
        pending.removeFirst()
        return next()
    }

    private func finish() -> JobStep {
        do throws(RecordError) {
            try auth.profiles.remove(["access_token", "access_token_secret", "bearer_token", "oauth2"], of: profile)
        } catch {
            return .fail(error)
        }
        ProfileEditor.line(reply, [("profile", .string(profile)), ("revoked", .array(strings: revoked)), ("removed", .bool(true)),
                                 ("credentials", .string(auth.path))])
        return .done
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), recovering: recovering(from:))
    }
}
