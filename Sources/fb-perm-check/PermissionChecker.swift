import Socialpipe
import SocialpipeGraph

/// How a record becomes an answer to "may this token do X?": the user's
/// permissions (`GET /{user}/permissions`, one request per credentials and
/// user for the whole run), and with `--token` what `debug_token` says of
/// the token itself (graph-api.md §4, §5.1).
final class PermissionChecker: RecordTool {
    let graph: GraphSetup
    /// Whether each record also inspects its token (`--token`).
    let inspectsToken: Bool
    /// `-v`: also say which token asks for the permissions.
    let verbose: Bool
    /// The unknown names warned about, and the profiles whose user token was said to ask.
    private var warnedNames: Set<String> = []
    private var toldUserToken: Set<String> = []

    init(graph: GraphSetup, inspectsToken: Bool, verbose: Bool) {
        self.graph = graph
        self.inspectsToken = inspectsToken
        self.verbose = verbose
    }

    func start(_ record: Record, reply: Reply) -> Job? {
        CheckJob(record: record, reply: reply, checker: self)
    }

    /// Permissions that no longer exist, and what a script asking for them
    /// wants today (graph-api.md §3, §4).
    static let removed: [String: (replacement: String?, why: String)] = [
        "publish_actions": ("pages_manage_posts", "publish_actions was removed on 2018-08-01: apps cannot post to user "
            + "timelines any more; a Page is posted to with a Page token holding pages_manage_posts"),
        "publish_stream": ("pages_manage_posts", "publish_stream was folded into publish_actions in 2012, which was removed "
            + "on 2018-08-01; a Page is posted to with a Page token holding pages_manage_posts"),
        "status_update": ("pages_manage_posts", "status_update was absorbed into publish_stream and then publish_actions, "
            + "which was removed on 2018-08-01; a Page is posted to with a Page token holding pages_manage_posts"),
        "manage_pages": ("pages_show_list", "manage_pages was replaced by the pages_* permissions; listing the Pages a "
            + "person manages, and their tokens (GET /me/accounts), needs pages_show_list"),
        "read_stream": ("pages_read_engagement", "read_stream was removed; reading a Page's posts needs pages_read_engagement"),
        "publish_to_groups": (nil, "publish_to_groups was removed from every API version on 2024-04-22 with the rest of "
            + "the Groups API; nothing replaces it"),
    ]

    /// What a record asks.
    struct Question {
        var user: String
        var names: [String]
        /// `permission` (one answer) rather than `permissions` (a table).
        var single: Bool
    }

    /// The fields of a record (contract §6): a misspelt one (`usr`) must not
    /// quietly ask about another user.
    static let fields = ["permission", "permissions", "user", "profile"]

    static func question(of record: Record) throws(RecordError) -> Question {
        try record.refuseUnknownKeys(fields)
        var user = "me"
        if let value = record.fields["user"], !value.isNull, value.string != "me" {
            do {
                user = try record.id("user", digits: 1...30) ?? "me"
            } catch {
                throw .input("user must be a user id (digits) or \"me\"")
            }
        }
        let one = record.fields["permission"].flatMap { $0.isNull ? nil : $0 }
        let list = record.fields["permissions"].flatMap { $0.isNull ? nil : $0 }
        if one != nil && list != nil { throw .input("give permission or permissions, not both") }
        var names: [String] = []
        if let one {
            guard one.kind == .string else { throw .input("permission must be a string") }
            names = [try name(one)]
        } else if let list {
            guard list.kind == .array, list.count > 0 else { throw .input("permissions must be a non-empty array of names") }
            for element in list.elements {
                guard element.kind == .string else { throw .input("permissions must hold permission names (strings)") }
                let name = try name(element)
                if !names.contains(name) { names.append(name) }
            }
        } else {
            throw .input("no permission: give permission or permissions")
        }
        return Question(user: user, names: names, single: one != nil)
    }

    /// The permission name a string value holds. Checked in place: a value of
    /// many megabytes is neither copied nor quoted whole in the error.
    static func name(_ value: JSON) throws(RecordError) -> String {
        let bytes = JSONView(value).stringBytes ?? UnsafeBufferPointer(start: nil, count: 0)
        guard !bytes.isEmpty, bytes.count <= longestName,
              bytes.allSatisfy({ (0x61...0x7A).contains($0) || (0x30...0x39).contains($0) || $0 == 0x5F }) else {
            throw .input("\"\(shown(bytes))\" is not a permission name (lower-case letters, digits and _, "
                + "at most \(longestName))")
        }
        return String(decoding: bytes, as: UTF8.self)
    }

    /// Most unknown names warned about in a run: a stream of made-up names
    /// must not flood stderr, nor fill memory.
    static let mostWarnings = 20

    /// A warning on stderr (even with `-q`) for each name, once a run, that
    /// is neither a known permission nor a removed one: a misspelt name would
    /// otherwise read `not_requested` in silence, and fail a gate.
    func warnAboutUnknown(_ names: [String]) {
        for name in names where Self.removed[name] == nil && warnedNames.count < Self.mostWarnings {
            guard let warning = GraphPermissions.warning(about: name), warnedNames.insert(name).inserted else { continue }
            Diagnostics.say(warning + (warnedNames.count == Self.mostWarnings ? " (no more such warnings this run)" : ""))
        }
    }

    /// Who asks for the permissions: the record's credentials, or when they
    /// are a Page's token, the user token fb-auth keeps beside it.
    func permissionsAuthorizer(_ authorizer: GraphAuthorizer) throws(RecordError) -> GraphAuthorizer {
        let credentials = authorizer.credentials
        guard let user = credentials.userCredentials else { return authorizer }
        if verbose, toldUserToken.insert(credentials.origin).inserted {
            Diagnostics.say("\(credentials.origin) holds a Page token, whose me is the Page: its user_access_token "
                + "asks for the user's permissions")
        }
        return try GraphAuthorizer(user, crypto: graph.crypto, carrying: [credentials.accessToken])
    }

    /// The user's permissions, shared by every record of the run that asks
    /// about the same user with the same credentials.
    func permissionsRequest(_ user: String, authorizer: GraphAuthorizer) -> RequestSpec {
        var request = graph.request("GET", "/\(user)/permissions", authorizer: authorizer)
        request.sharing = RequestSpec.Sharing(key: "permissions \(authorizer.identity) \(user)", keepAnswer: true)
        return request
    }

    /// `debug_token` for the record's token, asked with the app token
    /// (`APP_ID|APP_SECRET`) in the header. It travels inside a batch, so the
    /// token inspected is in the request's body, never in a URL.
    func tokenRequest(for authorizer: GraphAuthorizer) throws(RecordError) -> RequestSpec {
        let credentials = authorizer.credentials
        guard let appID = credentials.appID, let appSecret = credentials.appSecret else {
            throw RecordError(.auth, "--token needs the app's id and secret with the token from \(credentials.origin) "
                + "(FB_APP_ID and FB_APP_SECRET, or the profile's facebook.app_id and facebook.app_secret)")
        }
        let app = try GraphAuthorizer(FacebookCredentials(accessToken: appID + "|" + appSecret, origin: "the app of \(credentials.origin)"),
                                      crypto: graph.crypto, carrying: [credentials.accessToken])
        var request = graph.request("GET", "/debug_token", form: [Parameter("input_token", credentials.accessToken)], authorizer: app)
        request.batchKey = GraphBatching.key(for: app)
        request.sharing = RequestSpec.Sharing(key: "debug_token \(authorizer.identity)", keepAnswer: true)
        return request
    }

    /// Longest permission name taken (and shown in a message).
    static let longestName = 100

    /// `text` for a message: its first `longestName` bytes and `…` when it is longer.
    static func shown(_ text: some Collection<UInt8>) -> String {
        text.count <= longestName ? UTF8Validation.repaired(text)
            : UTF8Validation.repaired(text.prefix(longestName)) + "…"
    }

    /// What a `/permissions` answer says of one name.
    enum Listing {
        case status(String)
        case absent
        /// Listed twice with two statuses (declined, then granted): unknown.
        case conflicting(String, String)
    }

    /// A `/permissions` answer as read so far: where its entries lie, and
    /// what it said of the names asked until now.
    struct Reading {
        /// Kept so that its identifier, the key of this reading, is not reused.
        let body: ResponseBody
        let raw: RawJSON
        let entries: [Range<Int>]
        var names: [String: Listing] = [:]
    }

    private var readings: [ObjectIdentifier: Reading] = [:]

    /// What `answer`, `{"data": [{"permission": NAME, "status": STATUS}, …]}`,
    /// says of each of `names` (and of the names read before); the `http`
    /// error of an answer that is not a permissions list. An answer may list
    /// thousands of entries: it is read where it lies, once for every record
    /// that shares it, and only what it says of the names asked is kept.
    func listings(of names: [String], in answer: Answer) -> Result<[String: Listing], RecordError> {
        let key = ObjectIdentifier(answer.body)
        var reading: Reading
        if let known = readings[key] {
            reading = known
        } else {
            guard let raw = answer.body.raw, let data = raw.member("data", of: raw.root), raw.bytes[data.lowerBound] == 0x5B else {
                return .failure(RecordError(.http, "the permissions answer has no data list", status: answer.status))
            }
            reading = Reading(body: answer.body, raw: raw, entries: raw.elements(of: data))
        }
        let unread = names.filter { reading.names[$0] == nil }
        if !unread.isEmpty {
            for name in unread { reading.names[name] = .absent }
            let raw = reading.raw
            for entry in reading.entries {
                guard let name = raw.member("permission", of: entry).flatMap(raw.string), unread.contains(name),
                      let listed = reading.names[name], let status = raw.member("status", of: entry).flatMap(raw.string)
                else { continue }
                switch listed {
                case .absent: reading.names[name] = .status(status)
                case .status(let earlier) where earlier != status: reading.names[name] = .conflicting(earlier, status)
                default: break
                }
            }
            readings[key] = reading
        }
        return .success(reading.names)
    }

    /// The `token` member of a result from a `debug_token` answer, or the
    /// `auth` error of a token that is not valid.
    static func token(_ answer: Answer) -> Result<JSON, RecordError> {
        guard let data = answer.json?["data"], data.kind == .object, let valid = data["is_valid"]?.bool else {
            return .failure(RecordError(.http, "debug_token answered without data.is_valid", status: answer.status))
        }
        if !valid {
            let problem = data["error"]
            let subcode = problem?["subcode"]?.integer ?? problem?["error_subcode"]?.integer
            let message = GraphService.explainingToken(problem?["message"]?.string ?? "the token is not valid", subcode: subcode)
            var error = RecordError(.auth, message, status: answer.status, code: problem?["code"]?.integer.map { String($0) })
            if let subcode { error.extras.append(("error_subcode", .integer(subcode))) }
            return .failure(error)
        }
        let token = JSON.object()
        token.set("is_valid", .bool(true))
        for key: StaticString in ["type", "app_id", "user_id", "profile_id"] {
            if let value = data[key], !value.isNull { token.set(key, value) }
        }
        for key: StaticString in ["expires_at", "data_access_expires_at"] {
            // 0: the token never expires; nor does one that outlives year 9999.
            if let seconds = data[key]?.integer, seconds > 0, let time = Clock.iso8601(Double(seconds)) {
                token.set(key, string: time)
            } else {
                token.set(key, .null)
            }
        }
        token.set("scopes", data["scopes"] ?? JSON.array())
        return .success(token)
    }
}

/// One record: the user's permissions, then (with `--token`) the token's.
final class CheckJob: Job {
    let record: Record
    let reply: Reply
    private unowned let checker: PermissionChecker
    private var question: PermissionChecker.Question?
    private var authorizer: GraphAuthorizer?
    private var statuses: [String: String] = [:]
    private var askingForToken = false

    init(record: Record, reply: Reply, checker: PermissionChecker) {
        self.record = record
        self.reply = reply
        self.checker = checker
    }

    func begin() -> JobStep {
        do throws(RecordError) {
            let question = try PermissionChecker.question(of: record)
            checker.warnAboutUnknown(question.names)
            let authorizer = try checker.graph.authorizer(for: record)
            self.question = question
            self.authorizer = authorizer
            if question.names.contains(where: { PermissionChecker.removed[$0] == nil }) {
                return .send(checker.permissionsRequest(question.user, authorizer: try checker.permissionsAuthorizer(authorizer)))
            }
            return try afterPermissions()
        } catch {
            return .fail(error)
        }
    }

    private func next(after answer: Answer) -> JobStep {
        if askingForToken {
            switch PermissionChecker.token(answer) {
            case .success(let token): return conclude(token: token)
            case .failure(let error): return .fail(error)
            }
        }
        guard let question else { return .done }
        let names = question.names.filter { PermissionChecker.removed[$0] == nil }
        let found: [String: PermissionChecker.Listing]
        switch checker.listings(of: names, in: answer) {
        case .success(let listings): found = listings
        case .failure(let error): return .fail(error)
        }
        for name in names {
            switch found[name] {
            case .status(let status)?:
                statuses[name] = status
            case .conflicting(let first, let second)?:
                return .fail(RecordError(.http, "the permissions answer is inconsistent: it lists \(name) as both "
                    + "\(PermissionChecker.shown(first.utf8)) and \(PermissionChecker.shown(second.utf8))",
                    status: answer.status))
            case .absent?, nil:
                break
            }
        }
        do throws(RecordError) {
            return try afterPermissions()
        } catch {
            return .fail(error)
        }
    }

    private func afterPermissions() throws(RecordError) -> JobStep {
        guard checker.inspectsToken, let authorizer else { return conclude(token: nil) }
        askingForToken = true
        return .send(try checker.tokenRequest(for: authorizer))
    }

    /// The result; a permission not granted makes the run exit 1.
    private func conclude(token: JSON?) -> JobStep {
        guard let question else { return .done }
        let result = JSON.object()
        result.set("user", string: question.user)
        var allGranted = true
        var removed: [(String, String?)] = []
        let table = JSON.object()
        var status = ""
        for name in question.names {
            if let gone = PermissionChecker.removed[name] {
                status = "removed"
                removed.append((name, gone.replacement))
            } else {
                status = statuses[name] ?? "not_requested"
            }
            if status != "granted" { allGranted = false }
            table.set(member: name, string: status)
        }
        if question.single, let name = question.names.first {
            result.set("permission", string: name)
            result.set("status", string: status)
            result.set("granted", .bool(allGranted))
            if let gone = PermissionChecker.removed[name] {
                result.set("replacement", gone.replacement.map { .string($0) } ?? .null)
                result.set("message", string: gone.why)
            }
        } else {
            result.set("granted", .bool(allGranted))
            result.set("permissions", table)
            if !removed.isEmpty {
                let replacements = JSON.object()
                for (name, replacement) in removed { replacements.set(member: name, replacement.map { .string($0) } ?? .null) }
                result.set("removed", replacements)
            }
        }
        if let token { result.set("token", token) }
        reply.succeed(result, failsRun: !allGranted)
        return .done
    }

    /// Code 100 from `debug_token`: the token is another app's. From
    /// `/permissions`: a Page token, whose `me` is a Page without permissions.
    private func ending(with error: RecordError) -> RecordError {
        guard error.code == "100" else { return error }
        var error = error
        if askingForToken {
            error.kind = .auth
            error.message += " (debug_token: the token belongs to another app than the app id and secret given)"
        } else if error.message.contains("node type (Page)") {
            error.message += " (a Page token has no permissions of its own: ask with the token of a user who has a role "
                + "on the Page, or with the app token and the user's id)"
        }
        return error
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), ending: ending(with:))
    }
}
