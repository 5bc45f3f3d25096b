import Glibc
import Socialpipe
import SocialpipeInteractive
import SocialpipeX

/// What every tw-auth command shares: where X is, and (as every
/// interactive tool) the credentials file and the terminal to ask on.
final class TwitterAuth: InteractiveTool, RecordTool {
    enum Command: String, CaseIterable { case pin, oauth2, app, status, logout }

    let command: Command
    let apiBase: String
    let service = XService()
    /// `--access read|write` (pin), `--scopes`, `--client-id`, `--redirect-uri`, `--no-browser` (oauth2).
    var access: String?
    var scopes = "tweet.read tweet.write users.read follows.read offline.access media.write"
    var clientID: String?
    var redirect = "http://127.0.0.1:8739/callback"
    var pasteRedirect = false
    /// For `status`: the X tools' own view of the credentials (refreshing OAuth 2.0 tokens).
    let x: XSetup?

    init(command: Command, apiBase: String, path: String, terminal: Terminal?, x: XSetup?) {
        self.command = command
        self.apiBase = apiBase
        self.x = x
        super.init(path: path, service: "twitter", terminal: terminal)
    }

    func start(_ record: Record, reply: Reply) -> Job? {
        let profile = (try? record.string("profile")) ?? nil ?? "default"
        switch command {
        case .pin: return PINJob(auth: self, profile: profile, reply: reply)
        case .oauth2: return OAuth2Job(auth: self, profile: profile, reply: reply)
        case .app: return AppJob(auth: self, profile: profile, reply: reply)
        case .status: return StatusJob(auth: self, record: record, profile: profile, reply: reply)
        case .logout: return LogoutJob(auth: self, profile: profile, reply: reply)
        }
    }

    /// The app's API key and secret: the environment, the profile, or questions.
    func consumer(of profile: String) throws(RecordError) -> (key: String, secret: String) {
        let key = try profiles.value("TW_CONSUMER_KEY", "consumer_key", of: profile, question: "API key (consumer key): ",
                                     secret: false)
        let secret = try profiles.value("TW_CONSUMER_SECRET", "consumer_secret", of: profile,
                                        question: "API key secret (consumer secret): ", secret: true)
        return (key, secret)
    }

    /// A request to X with the parameters `form` (see `HTTPRequest.form`), `headers` first.
    func request(_ method: String, _ path: String, form: [Parameter]? = nil, headers: [String] = [],
                 authorizer: RequestAuthorizer?) -> RequestSpec {
        RequestSpec(.form(method, apiBase + path, form, headers: headers + HTTPRequest.acceptJSON), rateLimitKey: method + " " + path,
                    service: service, authorizer: authorizer)
    }

    static func account(_ answer: Answer) -> JSON? {
        guard let data = answer.json?["data"], let id = data["id"]?.string else { return nil }
        let account = JSON.object()
        account.set("id", string: id)
        if let username = data["username"]?.string { account.set("username", string: username) }
        return account
    }
}


/// `tw-auth pin`: OAuth 1.0a with a PIN (x-api.md §9.5).
final class PINJob: ProfileJob<TwitterAuth>, Job {
    private var signer: XAuthFlows.PINSigner?
    private var step = 0

    func begin() -> JobStep {
        do throws(RecordError) {
            let (key, secret) = try auth.consumer(of: profile)
            var signer = XAuthFlows.PINSigner(consumerKey: key, consumerSecret: secret, crypto: auth.crypto)
            signer.callback = "oob"
            self.signer = signer
            let form = auth.access.map { [Parameter("x_auth_access_type", $0)] }
            return .send(Self.formAnswered(auth.request("POST", "/oauth/request_token", form: form, authorizer: signer)))
        } catch {
            return .fail(error)
        }
    }

    private func next(after answer: Answer) -> JobStep {
        step += 1
        guard var signer else { return .done }
        switch step {
        case 1:
            let fields = XAuthFlows.form(answer)
            guard let token = fields["oauth_token"], let secret = fields["oauth_token_secret"],
                  fields["oauth_callback_confirmed"] == "true" else {
                return .fail(RecordError(.auth, "request_token answered without a confirmed request token", status: answer.status))
            }
            Terminal.show("Open this page, sign in as the account to post as, and authorize the app:\n  "
                + auth.apiBase + "/oauth/authorize?oauth_token=" + PercentEncoding.encoded(token))
            guard let pin = auth.terminal?.ask("PIN: "), !pin.isEmpty else { return .fail(RecordError(.auth, "no PIN given")) }
            signer.callback = nil
            signer.token = token
            signer.tokenSecret = secret
            signer.verifier = pin
            self.signer = signer
            return .send(Self.formAnswered(auth.request("POST", "/oauth/access_token", form: [], authorizer: signer)))
        case 2:
            let fields = XAuthFlows.form(answer)
            guard let token = fields["oauth_token"], let secret = fields["oauth_token_secret"] else {
                return .fail(RecordError(.auth, "access_token answered without an access token", status: answer.status))
            }
            do throws(RecordError) {
                try auth.profiles.store(profile, [("consumer_key", .string(signer.consumerKey)),
                                         ("consumer_secret", .string(signer.consumerSecret)),
                                         ("access_token", .string(token)), ("access_token_secret", .string(secret))])
                let credentials = TwitterCredentials(consumerKey: signer.consumerKey, consumerSecret: signer.consumerSecret,
                                                     accessToken: token, accessTokenSecret: secret, origin: "profile \"\(profile)\"")
                return .send(auth.request("GET", "/2/users/me", authorizer: try XAuthorizer(credentials, crypto: auth.crypto)))
            } catch {
                return .fail(error)
            }
        default:
            ProfileEditor.line(reply, [("profile", .string(profile)), ("method", .string("oauth1")),
                                     ("account", TwitterAuth.account(answer) ?? .null), ("credentials", .string(auth.path))])
            return .done
        }
    }

    private func ending(with error: RecordError) -> RecordError {
        guard step == 1, error.status == 401 else { return error }
        var error = error
        error.message += " (the PIN was not accepted; a request token takes one try: run tw-auth pin again)"
        return error
    }

    /// X's token steps answer in a form (`oauth_token=…&…`), not JSON (x-api.md §9.5).
    private static func formAnswered(_ request: RequestSpec) -> RequestSpec {
        var request = request
        request.answersWithJSON = false
        return request
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), ending: ending(with:))
    }
}

/// `tw-auth app`: an app-only bearer token (x-api.md §10).
final class AppJob: ProfileJob<TwitterAuth>, Job {
    private var key = ""
    private var secret = ""

    func begin() -> JobStep {
        do throws(RecordError) {
            (key, secret) = try auth.consumer(of: profile)
            return .send(auth.request("POST", "/oauth2/token", form: [Parameter("grant_type", "client_credentials")],
                                      headers: [OAuth2Token.basicAuthorization(key, secret)], authorizer: SecretsOf([secret])))
        } catch {
            return .fail(error)
        }
    }

    private func next(after answer: Answer) -> JobStep {
        guard let token = answer.json?["access_token"]?.string else {
            return .fail(RecordError(.auth, "the token endpoint answered without an access_token", status: answer.status))
        }
        do throws(RecordError) {
            try auth.profiles.store(profile, [("consumer_key", .string(key)), ("consumer_secret", .string(secret)),
                                     ("bearer_token", .string(token))])
        } catch {
            return .fail(error)
        }
        ProfileEditor.line(reply, [("profile", .string(profile)), ("method", .string("app")), ("credentials", .string(auth.path))])
        return .done
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:))
    }
}
