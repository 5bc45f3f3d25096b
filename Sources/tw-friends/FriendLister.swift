import Socialpipe
import SocialpipeX

/// How a record becomes the list of accounts a user follows: the user looked
/// up when named (once per run), then page after page (v2
/// `GET /2/users/:id/following`, or v1.1 `GET /1.1/friends/ids.json`).
final class FriendLister: RecordTool {
    let x: XSetup
    let legacy: Bool
    let pageSize: Int
    /// `user.fields`, already checked.
    let fields: String?

    init(x: XSetup, legacy: Bool, pageSize: Int, fields: String?) {
        self.x = x
        self.legacy = legacy
        self.pageSize = pageSize
        self.fields = fields
    }

    func start(_ record: Record, reply: Reply) -> Job? {
        FriendsJob(record: record, reply: reply, lister: self)
    }

    /// Accounts written, pages asked for and lists that asked for one, in the whole run.
    fileprivate var accountsWritten = 0
    fileprivate var pagesAsked = 0
    fileprivate var listsPaged = 0

    /// `12,000 accounts (page 13)` while one list runs: a record is one
    /// list, and a long one would leave a count of records at 0 for minutes.
    var progress: WorkProgress? {
        let pages = listsPaged > 1 ? "\(pagesAsked) pages" : "page \(pagesAsked)"
        return WorkProgress(count: accountsWritten, unit: ("account", "accounts"), detail: pagesAsked == 0 ? nil : pages)
    }
}

/// One user's list.
final class FriendsJob: Job {
    /// Whose list: as the record names the user.
    enum Selector {
        /// `username` as given (`@` included) and as sent.
        case username(given: String, name: String)
        /// `user_id`, as given.
        case userID(JSON, id: String)
        /// The authenticated user.
        case me
    }

    let reply: Reply
    private let record: Record
    private unowned let lister: FriendLister
    private var selector = Selector.me
    private var authorizer: XAuthorizer?
    /// The user's id, once known.
    private var userID: String?
    /// Accounts still wanted (`max`), when limited.
    private var remaining: Int64?
    /// The token (v2) or cursor (v1.1) of the page asked for now; nil for the first page.
    private var position: String?
    /// Every position this list has been at: a server that gives one again would loop for ever.
    private var positionsSeen: Set<String> = []
    /// The page's result lines are built here.
    private let line = ByteBuffer(capacity: 64)
    private var pagesAsked = 0

    init(record: Record, reply: Reply, lister: FriendLister) {
        self.record = record
        self.reply = reply
        self.lister = lister
    }

    func begin() -> JobStep {
        do throws(RecordError) {
            try readRecord()
            let authorizer = try lister.x.authorizer(for: record)
            self.authorizer = authorizer
            return .send(firstRequest(authorizer))
        } catch {
            return .fail(error)
        }
    }

    /// The fields a record may have.
    static let fields = ["username", "user_id", "max", "pagination_token", "cursor", "profile"]

    private func readRecord() throws(RecordError) {
        // A misspelt key would quietly list the signed-in user's accounts instead.
        try record.refuseUnknownKeys(Self.fields)
        let username = try record.string("username")
        let userID = try record.id("user_id")
        switch (username, userID) {
        case (.some, .some):
            throw .input("give username or user_id, not both")
        case (.some(let given), nil):
            let name = given.hasPrefix("@") ? String(given.dropFirst()) : given
            guard (1...15).contains(name.utf8.count),
                  name.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x5F })
            else {
                // Quoted in part: a record's field may be as long as --max-line.
                let shown = given.unicodeScalars.count > 40 ? String(given.unicodeScalars.prefix(40)) + "…" : given
                throw .input("username must be 1 to 15 letters, digits or underscores (a leading @ is dropped), got \"\(shown)\"")
            }
            selector = .username(given: given, name: name)
        case (nil, .some(let id)):
            selector = .userID(record.fields["user_id"] ?? .string(id), id: id)
            self.userID = id
        case (nil, nil):
            selector = .me
        }
        remaining = try record.integer("max", in: 1...Int64.max)
        let token = try record.string("pagination_token")
        let cursor = try cursorField()
        if lister.legacy {
            if token != nil { throw .input("pagination_token is for --api 2; with --api 1.1 give cursor") }
            position = cursor
        } else {
            if cursor != nil { throw .input("cursor is for --api 1.1; with --api 2 give pagination_token") }
            if let token {
                guard Self.isPageToken(token) else {
                    throw .input("pagination_token must be a token X gave (printable ASCII, none of :/?#[]@!$&'()*+,;=)")
                }
            }
            position = token
        }
        if let position { positionsSeen.insert(position) }
    }

    /// A v2 page token as X writes them: printable ASCII without the
    /// characters that delimit a URL's parts, so that whoever made it (a
    /// record, a server) cannot change the request it goes into.
    static func isPageToken(_ token: String) -> Bool {
        (1...1024).contains(token.utf8.count) && token.utf8.allSatisfy { $0 > 0x20 && $0 < 0x7F && !reserved.contains($0) }
    }

    /// RFC 3986's reserved characters (gen-delims and sub-delims).
    private static let reserved = Set(":/?#[]@!$&'()*+,;=".utf8)

    /// `cursor` as a string of digits (an integer is taken too; -1 is the start).
    private func cursorField() throws(RecordError) -> String? {
        guard let value = record.fields["cursor"], !value.isNull else { return nil }
        if let number = value.integer, number >= -1 { return number == -1 ? nil : String(number) }
        guard let text = value.string, text == "-1" || Record.isID(text) else {
            throw .input("cursor must be a cursor X gave (digits)")
        }
        return text == "-1" ? nil : text
    }

    private func firstRequest(_ authorizer: XAuthorizer) -> RequestSpec {
        if lister.legacy || userID != nil { return page(authorizer) }
        let identity = authorizer.identity
        var spec: RequestSpec
        switch selector {
        case .username(_, let name):
            spec = lister.x.request("GET", "/2/users/by/username/" + name, endpoint: "GET /2/users/by/username/:username",
                                    authorizer: authorizer)
            spec.sharing = RequestSpec.Sharing(key: "username " + name.lowercased() + " " + identity, keepAnswer: true)
        default:
            spec = lister.x.request("GET", "/2/users/me", endpoint: "GET /2/users/me", authorizer: authorizer)
            spec.sharing = RequestSpec.Sharing(key: "me " + identity, keepAnswer: true)
        }
        spec.price = lister.x.price(.userRead)
        return spec
    }

    /// The accounts the next page asks for.
    private var pageSize: Int { Int(min(Int64(lister.pageSize), remaining ?? Int64.max)) }

    /// What each account of a page costs: less for the authenticated user's
    /// own list. (X prices it so when that user also owns the app; for a
    /// token of another account, a prices file gives owned_read its price.)
    /// X lists only v2's endpoint as an owned read, never v1.1's.
    private func accountPrice(_ authorizer: XAuthorizer) -> XPrices.Key {
        if lister.legacy { return .followingRead }
        if case .me = selector { return .ownedRead }
        if let userID, userID == authorizer.userID { return .ownedRead }
        return .followingRead
    }

    /// The request for the page at `position`, priced per account returned;
    /// the budget may cut it to fewer accounts.
    private func page(_ authorizer: XAuthorizer) -> RequestSpec {
        if pagesAsked == 0 { lister.listsPaged += 1 }
        pagesAsked += 1
        lister.pagesAsked += 1
        var spec = lister.x.request("GET", pagePath(size: pageSize), endpoint: lister.legacy ? "GET /1.1/friends/ids"
                                    : "GET /2/users/:id/following", authorizer: authorizer)
        var price = lister.x.price(accountPrice(authorizer), units: pageSize)
        price.listed = lister.legacy ? "ids" : "data"
        let apiBase = lister.x.apiBase
        price.fitting = { request, size in request.url = apiBase + self.pagePath(size: size) }
        spec.price = price
        return spec
    }

    /// The path and query of the page at `position`, asking for `size` accounts.
    private func pagePath(size: Int) -> String {
        if lister.legacy {
            var query = "cursor=" + (position ?? "-1") + "&count=\(size)&stringify_ids=true"
            switch selector {
            case .username(_, let name): query += "&screen_name=" + name
            case .userID(_, let id): query += "&user_id=" + id
            case .me: break
            }
            return "/1.1/friends/ids.json?" + query
        }
        var query = "max_results=\(size)"
        if let position { query += "&pagination_token=" + PercentEncoding.encoded(position) }
        if let fields = lister.fields { query += "&user.fields=" + PercentEncoding.encoded(fields) }
        return "/2/users/\(userID ?? "")/following?" + query
    }

    /// A dry run shows the first request; its `cost` is the record's most:
    /// the lookup it shows, and the first page in full after it.
    func dryRun(_ description: JSON, of request: RequestSpec) -> JobStep {
        if request.price?.listed == nil, let authorizer {
            reply.charge(lister.x.prices[accountPrice(authorizer)] * pageSize)
        }
        let result = JSON.object()
        result.set("request", description)
        reply.succeed(result)
        return .done
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:), ending: ending(with:))
    }

    private func next(after answer: Answer) -> JobStep {
        guard let authorizer else { return .fail(RecordError(.auth, "no X credentials")) }
        if userID == nil && !lister.legacy {
            // The id goes into the next URL: digits, whoever sent it.
            guard let id = answer.json?["data"]?["id"]?.string, Record.isID(id) else {
                return .fail(RecordError(.http, "the user lookup's answer has no user id (digits)", status: answer.status))
            }
            userID = id
            return .send(page(authorizer))
        }
        // A page is read in place: its accounts are copied out as they came,
        // once the whole page is known to hold nothing else.
        guard let page = answer.body.raw else {
            return .fail(RecordError(.http, "HTTP \(answer.status) with a body that is not JSON", status: answer.status))
        }
        let accounts: [Range<Int>]
        let next: String?
        do throws(PageProblem) {
            (accounts, next) = lister.legacy ? try readIDs(page) : try readUsers(page)
        } catch {
            return .fail(RecordError(.http, "the page could not be read: \(error.why)", status: answer.status))
        }
        let written = min(accounts.count, Int(remaining ?? Int64.max))
        lister.accountsWritten += written
        remaining = remaining.map { $0 - Int64(written) }
        let charged = answer.charged
        let write = { [self] in
            var charge = Charges(charged, written: written)
            if lister.legacy {
                writeIDs(accounts.prefix(written), of: page, charge: &charge)
            } else {
                writeUsers(accounts.prefix(written), of: page, charge: &charge)
            }
        }
        guard let next, remaining.map({ $0 > 0 }) ?? true else {
            write()
            return .done
        }
        position = next
        guard positionsSeen.insert(next).inserted else {
            write()
            return .fail(RecordError(.http, "the server gave a page position it had given before (\(next)): the list "
                + "would never end", status: answer.status))
        }
        // The page was read whole before the next is asked for (and paid): a
        // page that cannot be read ends the list where it is.
        return .sendWhileWriting(self.page(authorizer), write: write)
    }

    /// A v2 page's users (objects, each with an id of digits) and the next page's token.
    private func readUsers(_ page: RawJSON) throws(PageProblem) -> (accounts: [Range<Int>], next: String?) {
        let users = try list("data", of: page)
        guard Self.areUsers(users, of: page) else { throw PageProblem(why: "an account is not a user object with an id") }
        // A short or empty page may still have a next one.
        guard let meta = page.member("meta", of: page.root), let token = page.member("next_token", of: meta) else {
            return (users, nil)
        }
        guard let text = page.string(token), Self.isPageToken(text) else {
            throw PageProblem(why: "its next_token is not a page token")
        }
        return (users, text)
    }

    /// A v1.1 page's ids (strings of digits, or integers) and the next cursor ("0" ends the list).
    private func readIDs(_ page: RawJSON) throws(PageProblem) -> (accounts: [Range<Int>], next: String?) {
        let ids = try list("ids", of: page)
        guard Self.areIDs(ids, of: page, unquoted: true) else { throw PageProblem(why: "an id is not a string of digits") }
        guard let cursor = page.member("next_cursor_str", of: page.root) else { return (ids, nil) }
        guard let text = page.string(cursor), Record.isID(text) else {
            throw PageProblem(why: "its next_cursor_str is not a cursor")
        }
        return (ids, text == "0" ? nil : text)
    }

    /// Whether each value at `users` is an object whose `id` is a string of digits.
    private static func areUsers(_ users: [Range<Int>], of page: RawJSON) -> Bool {
        page.bytes.withUnsafeBufferPointer { text in
            guard let base = text.baseAddress else { return users.isEmpty }
            return users.allSatisfy { user in
                // As X writes a user, `{"id":"DIGITS"` first: read at once
                // (the seven bytes `{"id":"` as one little-endian word).
                if user.count > 9,
                   UnsafeRawPointer(base + user.lowerBound).loadUnaligned(as: UInt64.self) & 0x00FF_FFFF_FFFF_FFFF == 0x22_3A22_6469_227B {
                    let digits = user.lowerBound + 7
                    let end = JSONScan.digitsEnd(base, from: digits, count: user.upperBound)
                    if end < user.upperBound, base[end] == 0x22, Record.idDigits.contains(end - digits) { return true }
                }
                guard let id = page.member("id", of: user) else { return false }
                return areIDs([id], of: page)
            }
        }
    }

    /// Whether each value at `ranges` is a string of digits (`unquoted`: or
    /// digits without quotes), read in place.
    private static func areIDs(_ ranges: [Range<Int>], of page: RawJSON, unquoted: Bool = false) -> Bool {
        page.bytes.withUnsafeBufferPointer { text in
            guard let base = text.baseAddress else { return ranges.isEmpty }
            for range in ranges {
                guard base[range.lowerBound] == 0x22 else {
                    if unquoted && Record.isID(UnsafeBufferPointer(rebasing: text[range])) { continue }
                    return false
                }
                // `"DIGITS"`, as X writes an id: read in place, a page's five thousand in a tight loop.
                if Record.isID(UnsafeBufferPointer(start: base + range.lowerBound + 1, count: range.count - 2)) { continue }
                // Digits may be written with escapes (`\u0031`), as jansson would read them.
                guard page.string(range).map({ Record.isID($0) }) ?? false else { return false }
            }
            return true
        }
    }

    /// The elements of the page's list `name` (none when it is absent); the
    /// page must be an object, and the list a list.
    private func list(_ name: StaticString, of page: RawJSON) throws(PageProblem) -> [Range<Int>] {
        guard page.isObject(page.root) else { throw PageProblem(why: "it is not a JSON object") }
        guard let list = page.member(name, of: page.root) else { return [] }
        guard page.isArray(list) else { throw PageProblem(why: "its \(name) is not a list") }
        return page.elements(of: list)
    }

    /// Why a page's contents cannot be copied out.
    struct PageProblem: Error {
        let why: String
    }

    /// What a page cost, shared out among the accounts written: each its
    /// price, and the last also the accounts returned beyond `max`.
    struct Charges {
        let each: Money
        private var left: Int
        private var unwritten: Int

        init(_ charged: (units: Int, each: Money)?, written: Int) {
            each = charged?.each ?? .zero
            left = written
            unwritten = max(0, (charged?.units ?? 0) - written)
        }

        /// What the next account written costs.
        mutating func next() -> Money {
            left -= 1
            return left == 0 ? each * (1 + unwritten) : each
        }
    }

    /// Writes a v2 page's users as they came.
    private func writeUsers(_ users: ArraySlice<Range<Int>>, of page: RawJSON, charge: inout Charges) {
        for user in users {
            reply.charge(charge.next())
            page.withText(user) { reply.succeed(resultText: $0, compact: page.isCompact) }
        }
    }

    /// Writes a v1.1 page's ids as `{"id": "…"}` (checked to be digits).
    private func writeIDs(_ ids: ArraySlice<Range<Int>>, of page: RawJSON, charge: inout Charges) {
        for id in ids {
            reply.charge(charge.next())
            line.removeAll()
            line.append("{\"id\":")
            // Ids are strings with stringify_ids; a number is written as one.
            if !page.isString(id) { line.append(0x22) }
            page.withText(id) { line.append($0) }
            if !page.isString(id) { line.append(0x22) }
            line.append(0x7D)
            reply.succeed(resultText: line.bytes)
        }
    }

    /// An error that ends a list carries `resume`: the record's selector and
    /// where the list stopped, to be fed back as a record.
    private func ending(with error: RecordError) -> RecordError {
        var error = error
        guard ![.input, .validation, .notFound].contains(error.kind) else { return error }
        let resume = JSON.object()
        switch selector {
        case .username(let given, _): resume.set("username", string: given)
        case .userID(let given, _): resume.set("user_id", given)
        case .me: break
        }
        if let profile = record.fields["profile"], !profile.isNull { resume.set("profile", profile) }
        if let position { resume.set(lister.legacy ? "cursor" : "pagination_token", string: position) }
        if let remaining { resume.set("max", .integer(remaining)) }
        error.extras.append(("resume", resume))
        return error
    }
}
