import Socialpipe
import SocialpipeInteractive
import SocialpipeGraph

/// `fb-auth device`: Facebook Login for Devices (graph-api.md §5.3). The
/// person enters a code at facebook.com/device while the job polls at the
/// interval Graph gives, each poll a request the engine sends after that
/// wait; the user token it brings is exchanged for a long-lived one.
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
    private var expiresAt: JSON?

    private enum Phase { case login, polling, exchanging, account }

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
            return .send(auth.request("POST", "/device/login", form: [Parameter("scope", auth.scopes)],
                                      authorizer: try auth.appToken(appID, clientToken)))
        } catch {
            return .fail(error)
        }
    }

    private func poll() throws(RecordError) -> JobStep {
        .sendAfter(auth.request("POST", "/device/login_status", form: [Parameter("code", code)],
                                authorizer: try auth.appToken(appID, clientToken, carrying: [code])),
                   seconds: interval)
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
                return try poll()
            case .polling:
                guard let token = answer.json?["access_token"]?.string, !token.isEmpty else {
                    throw RecordError(.auth, "device/login_status answered without an access_token", status: answer.status)
                }
                phase = .exchanging
                return .send(auth.exchangeRequest(appID: appID, appSecret: appSecret, token: token))
            case .exchanging:
                let stored = try auth.storeUserToken(answer, profile: profile, appID: appID, appSecret: appSecret,
                                                     more: [("client_token", .string(clientToken))])
                expiresAt = stored.expiresAt
                phase = .account
                return .send(stored.account)
            case .account:
                auth.reportUserToken(reply, profile: profile, method: "device", expiresAt: expiresAt ?? .null, me: answer)
                return .done
            }
        } catch {
            return .fail(error)
        }
    }

    /// Pending and slow down are answers to wait on; expired ends the login.
    private func recovering(from error: RecordError) -> JobStep? {
        guard phase == .polling, let subcode = GraphService.subcode(of: error) else { return nil }
        do throws(RecordError) {
            switch subcode {
            case GraphService.devicePending:
                if Clock.monotonic() + interval > deadline { return .fail(expired(error)) }
                return try poll()
            case GraphService.deviceSlowDown:
                interval += Self.slowDownStep
                return try poll()
            case GraphService.deviceExpired:
                return .fail(expired(error))
            default:
                return nil
            }
        } catch {
            return .fail(error)
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
        case .exchanging where error.kind == .auth:
            error.message += " (the app secret was refused: the user token could not be made long-lived)"
        default:
            break
        }
        return error
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), recovering: recovering(from:), ending: ending(with:))
    }
}
