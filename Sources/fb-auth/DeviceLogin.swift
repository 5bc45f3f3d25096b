import Socialpipe
import SocialpipeInteractive
import SocialpipeGraph

/// `fb-auth device`: Facebook Login for Devices (graph-api.md §5.3). The
/// person enters a code at facebook.com/device while the job polls at the
/// interval Graph gives, each poll a request the engine sends after that
/// wait. The user token it brings is long-lived already (contract §7): it is
/// stored with the expiry it came with, once its account has answered.
final class DeviceJob: ProfileJob<FacebookAuth>, Job {
    private var appID = ""
    private var clientToken = ""
    private var appSecret = ""
    private var code = ""
    private var phase = Phase.login
    /// Seconds between polls, from Graph's answer (5 when it gives none).
    private var interval = 5.0
    /// When the code expires (monotonic), from `expires_in`.
    private var deadline = 0.0

    /// `account`: the token approved, waiting for `GET /me`.
    private enum Phase { case login, polling, account(FacebookAuth.UserToken) }

    /// Polls are never closer than this, whatever the answer says.
    static let shortestInterval = 1.0
    /// Nor further apart than this (Graph asks for 5 s).
    static let longestInterval = 60.0
    /// The longest a code is waited for (Graph gives 420 s).
    static let longestLogin = 3600.0
    /// What Graph's slow-down answer adds to the interval.
    static let slowDownStep = 5.0

    func begin() -> JobStep {
        do throws(RecordError) {
            appID = try auth.appID(of: profile)
            clientToken = try auth.profiles.value("FB_CLIENT_TOKEN", "client_token", of: profile,
                                         question: "Client token (App settings > Advanced > Security): ", secret: true)
            // Asked now, so that nothing waits on the terminal once the person has approved.
            appSecret = try auth.appSecret(of: profile)
            return .send(deviceRequest("login", [Parameter("scope", auth.scopes)]))
        } catch {
            return .fail(error)
        }
    }

    /// `POST /device/ENDPOINT` with the client token `APP_ID|CLIENT_TOKEN` as
    /// `access_token` in the form body, where Login for Devices takes it
    /// (https://developers.facebook.com/docs/facebook-login/for-devices), never
    /// in a header or the URL.
    private func deviceRequest(_ endpoint: String, _ form: [Parameter], carrying carried: [String] = []) -> RequestSpec {
        auth.request("POST", "/device/" + endpoint, form: [Parameter("access_token", appID + "|" + clientToken)] + form,
                     authorizer: SecretsOf([clientToken] + carried))
    }

    private func poll() -> JobStep {
        .sendAfter(deviceRequest("login_status", [Parameter("code", code)], carrying: [code]), seconds: interval)
    }

    private func next(after answer: Answer) -> JobStep {
        do throws(RecordError) {
            switch phase {
            case .login:
                guard let body = answer.json, let code = body["code"]?.string, let userCode = body["user_code"]?.string else {
                    throw RecordError(.auth, "device/login answered without a code", status: answer.status)
                }
                self.code = code
                // Within reason, whatever the answer says: a wait is never endless.
                if let given = body["interval"]?.number, given > 0 { interval = min(given, Self.longestInterval) }
                interval = max(interval, Self.shortestInterval)
                let lifetime = min(max(body["expires_in"]?.number ?? 420, 1), Self.longestLogin)
                deadline = Clock.monotonic() + lifetime
                let page = body["verification_uri"]?.string ?? "https://www.facebook.com/device"
                auth.show("Open \(page) and enter this code: \(userCode)\n"
                    + "Waiting for you to approve (the code expires in \(Int(lifetime / 60)) min; Ctrl-C gives up) ...")
                phase = .polling
                return poll()
            case .polling:
                let token = try auth.userToken(in: answer, from: "device/login_status")
                phase = .account(token)
                return .send(try auth.accountRequest(token, appSecret: appSecret, profile: profile))
            case .account(let token):
                try auth.store(token, profile: profile, appID: appID, appSecret: appSecret,
                               more: [("client_token", .string(clientToken))])
                auth.reportUserToken(reply, profile: profile, method: "device", expiresAt: token.expiresAt, me: answer)
                return .done
            }
        } catch {
            return .fail(error)
        }
    }

    /// Pending and slow down are answers to wait on; expired ends the login.
    private func recovering(from error: RecordError) -> JobStep? {
        guard case .polling = phase, let subcode = GraphService.subcode(of: error) else { return nil }
        switch subcode {
        case GraphService.devicePending:
            if Clock.monotonic() + interval > deadline { return .fail(expired(error)) }
            return poll()
        case GraphService.deviceSlowDown:
            interval += Self.slowDownStep
            return poll()
        case GraphService.deviceExpired:
            return .fail(expired(error))
        default:
            return nil
        }
    }

    private func expired(_ error: RecordError) -> RecordError {
        var expired = error
        expired.kind = .auth
        expired.message = "the code expired: run fb-auth device again"
        return expired
    }

    private func ending(with error: RecordError) -> RecordError {
        var error = error
        switch phase {
        case .login where error.kind == .auth:
            error.message += " (check the app id and the client token: App settings > Advanced > Security)"
        case .login where error.code == "3":
            error.message += " (switch on Login from Devices in the app's Facebook Login settings)"
        case .account where error.kind == .auth:
            error.message += " (nothing was stored: check the app secret, FB_APP_SECRET or the profile's app_secret)"
        default:
            break
        }
        return error
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), recovering: recovering(from:), ending: ending(with:))
    }
}
