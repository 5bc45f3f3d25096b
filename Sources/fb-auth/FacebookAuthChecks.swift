import Socialpipe
import SocialpipeInteractive
import SocialpipeGraph

/// `fb-auth pages`: the Pages the profile's user has a role on
/// (`GET /me/accounts`), one line each; with `--store PAGE_ID`, that Page's
/// token becomes the profile's token, the user token kept beside it.
final class PagesJob: ProfileJob<FacebookAuth>, Job {
    private var userToken = ""
    private var authorizer: GraphAuthorizer?
    /// Fields asked for: a Page's token only when it is to be stored.
    private var fields = "id,name,category,tasks"
    private var stored = false

    func begin() -> JobStep {
        do throws(RecordError) {
            guard let section = try auth.profiles.section(profile), let token = FacebookAuth.userToken(section) else {
                throw RecordError(.auth, "profile \"\(profile)\" has no Facebook user token: run fb-auth device --profile \(profile)")
            }
            userToken = token
            authorizer = try auth.bearer(token, appSecret: section[field: "app_secret"], profile: profile)
            if auth.storePage != nil { fields += ",access_token" }
            return try page(after: nil)
        } catch {
            return .fail(error)
        }
    }

    private func page(after cursor: String?) throws(RecordError) -> JobStep {
        let query = "fields=" + fields + "&limit=100" + (cursor.map { "&after=" + PercentEncoding.encoded($0) } ?? "")
        return .send(auth.request("GET", "/me/accounts?" + query, authorizer: authorizer))
    }

    private func next(after answer: Answer) -> JobStep {
        guard let body = answer.json, let pages = body["data"], pages.kind == .array else {
            return .fail(RecordError(.http, "/me/accounts answered without a data list", status: answer.status))
        }
        for page in pages.elements {
            guard let id = page["id"]?.string else { continue }
            var members: [(String, JSON)] = [("id", .string(id))]
            for key in ["name", "category", "tasks"] { members.append((key, page.member(key) ?? .null)) }
            guard let wanted = auth.storePage else {
                ProfileEditor.line(reply, members)
                continue
            }
            guard id == wanted else { continue }
            guard let token = page["access_token"]?.string, !token.isEmpty else {
                return .fail(RecordError(.permission, "Facebook gave no token for Page \(id): the user needs a task on it "
                                         + "that allows posting, and the token pages_show_list and pages_manage_posts"))
            }
            // A Page token fetched with a long-lived user token has no expiry (graph-api.md §5.2).
            do throws(RecordError) {
                try auth.profiles.store(profile, [("access_token", .string(token)), ("token_type", .string("page")),
                                         ("user_access_token", .string(userToken))], removing: ["expires_at"])
            } catch {
                return .fail(error)
            }
            stored = true
            ProfileEditor.line(reply, [("profile", .string(profile))] + members
                + [("token_type", .string("page")), ("credentials", .string(auth.path))])
            return .done
        }
        // Graph gives `next` only when more follow; its URL carries the token, so only the cursor is taken from it.
        if body["paging"]?["next"] != nil, let after = body["paging"]?["cursors"]?["after"]?.string {
            do throws(RecordError) { return try page(after: after) } catch { return .fail(error) }
        }
        if let wanted = auth.storePage, !stored {
            return .fail(RecordError(.notFound, "Page \(wanted) is not among the Pages of profile \"\(profile)\"'s user "
                                     + "(fb-auth pages --profile \(profile) lists them)"))
        }
        return .done
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:))
    }
}

/// `fb-auth status`: what `debug_token` says of a profile's token, asked
/// with the app token `APP_ID|APP_SECRET`. The token inspected travels in
/// a one-request batch's body, never in a URL (as fb-perm-check --token).
final class StatusJob: Job {
    let reply: Reply
    private let auth: FacebookAuth
    /// nil: the credentials of the environment.
    private let profile: String?

    init(auth: FacebookAuth, profile: String?, reply: Reply) {
        self.auth = auth
        self.profile = profile
        self.reply = reply
    }

    func begin() -> JobStep {
        do throws(RecordError) {
            var token = Environment.nonEmpty("FB_ACCESS_TOKEN")
            var appID = Environment.nonEmpty("FB_APP_ID")
            var appSecret = Environment.nonEmpty("FB_APP_SECRET")
            var origin = "the environment"
            if let profile {
                let section = try auth.profiles.section(profile)
                token = section?[field: "access_token"].flatMap { $0.isEmpty ? nil : $0 }
                appID = section?[field: "app_id"] ?? appID
                appSecret = section?[field: "app_secret"] ?? appSecret
                origin = "profile \"\(profile)\""
                guard token != nil else { throw RecordError(.auth, "profile \"\(profile)\" has no Facebook token in \(auth.path)") }
            }
            guard let token else { throw RecordError(.auth, "no Facebook token to check") }
            guard let appID, let appSecret else {
                throw RecordError(.auth, "checking the token of \(origin) needs the app's id and secret: set FB_APP_ID and "
                    + "FB_APP_SECRET, or store facebook.app_id and facebook.app_secret in the profile")
            }
            let app = try auth.appToken(appID, appSecret, carrying: [token], origin: origin)
            var request = auth.request("GET", "/debug_token?input_token=" + PercentEncoding.encoded(token), authorizer: app)
            request.batchKey = GraphBatching.key(for: app)
            return .send(request)
        } catch {
            return .fail(error)
        }
    }

    private func next(after answer: Answer) -> JobStep {
        guard let data = answer.json?["data"], data.kind == .object, let valid = data["is_valid"]?.bool else {
            return .fail(RecordError(.http, "debug_token answered without data.is_valid", status: answer.status))
        }
        var members: [(String, JSON)] = [("profile", profile.map { .string($0) } ?? .null), ("valid", .bool(valid))]
        for key in ["type", "app_id", "user_id", "profile_id"] {
            if let value = data.member(key), !value.isNull { members.append((key, value)) }
        }
        for key in ["expires_at", "data_access_expires_at"] {
            // 0: the token never expires; nor does one that outlives year 9999.
            let seconds = data.member(key)?.integer ?? 0
            members.append((key, seconds > 0 ? Clock.iso8601(Double(seconds)).map { .string($0) } ?? .null : .null))
        }
        members.append(("scopes", data["scopes"] ?? JSON.array()))
        if !valid {
            let problem = data["error"]
            let subcode = problem?["subcode"]?.integer ?? problem?["error_subcode"]?.integer
            members.append(("problem", .string(GraphService.explainingToken(problem?["message"]?.string ?? "the token is not valid",
                                                                            subcode: subcode))))
        }
        ProfileEditor.line(reply, members, failsRun: !valid)
        return .done
    }

    /// A token Graph refuses outright, or one of another app than the app
    /// token's, is not valid: an answer, not a failure of the check.
    private func recovering(from error: RecordError) -> JobStep? {
        var problem = error.message
        if error.code == "100" && error.message.contains("App_id") {
            problem += " (the token belongs to another app than the app id given)"
        } else if error.kind != .auth {
            return nil
        }
        ProfileEditor.line(reply, [("profile", profile.map { .string($0) } ?? .null), ("valid", .bool(false)),
                                  ("problem", .string(problem))], failsRun: true)
        return .done
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), recovering: recovering(from:))
    }
}

/// `fb-auth logout`: revokes the app's permissions (`DELETE /me/permissions`,
/// which ends every token the user gave the app), then removes the profile's
/// tokens from the file; the app's id, secret and client token stay.
final class LogoutJob: ProfileJob<FacebookAuth>, Job {

    func begin() -> JobStep {
        do throws(RecordError) {
            guard let section = try auth.profiles.section(profile), section[field: "access_token"] != nil else {
                throw RecordError(.auth, "profile \"\(profile)\" has no Facebook token in \(auth.path)")
            }
            // A Page token cannot revoke its user's permissions.
            guard let token = FacebookAuth.userToken(section) else { return finish(revoked: false) }
            if let warning = try endingOthers(userToken: token, appID: section[field: "app_id"]) { Diagnostics.say(warning) }
            return .send(auth.request("DELETE", "/me/permissions",
                                      authorizer: try auth.bearer(token, appSecret: section[field: "app_secret"], profile: profile)))
        } catch {
            return .fail(error)
        }
    }

    /// What to say before revoking: Facebook revokes the app for the user,
    /// which ends the tokens of the other profiles that hold this user
    /// token (or a Page token beside it), and of those of the same app
    /// that are the same user's, which only Facebook could tell.
    private func endingOthers(userToken: String, appID: String?) throws(RecordError) -> String? {
        var same: [String] = []
        var sameApp: [String] = []
        for (name, section) in try auth.profiles.sections() where name != profile && section[field: "access_token"]?.isEmpty == false {
            if FacebookAuth.userToken(section) == userToken {
                same.append(name)
            } else if let appID, section[field: "app_id"] == appID {
                sameApp.append(name)
            }
        }
        func named(_ names: [String]) -> String {
            (names.count == 1 ? "profile " : "profiles ") + names.map { "\"\($0)\"" }.joined(separator: ", ")
        }
        var ended: [String] = []
        if !same.isEmpty { ended.append("the tokens of \(named(same)) (the same user's)") }
        if !sameApp.isEmpty { ended.append("those of \(named(sameApp)) if they are the same user's (the same app's)") }
        guard !ended.isEmpty else { return nil }
        return "Facebook revokes the app for the user of profile \"\(profile)\": that also ends "
            + ended.joined(separator: ", and ")
    }

    private func next(after answer: Answer) -> JobStep {
        finish(revoked: answer.json?["success"]?.bool ?? true)
    }

    /// A token Facebook no longer takes is as good as revoked.
    private func recovering(from error: RecordError) -> JobStep? {
        error.kind == .auth ? finish(revoked: false) : nil
    }

    private func finish(revoked: Bool) -> JobStep {
        do throws(RecordError) {
            try auth.profiles.remove(["access_token", "user_access_token", "token_type", "expires_at"], of: profile)
        } catch {
            return .fail(error)
        }
        ProfileEditor.line(reply, [("profile", .string(profile)), ("revoked", .bool(revoked)), ("removed", .bool(true)),
                                  ("credentials", .string(auth.path))])
        return .done
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), recovering: recovering(from:))
    }
}
