// tw-friends: lists the accounts a user follows, one line per account.
import Glibc
import Socialpipe
import SocialpipeX

let tool = ToolDescription(
    name: "tw-friends",
    usage: "[OPTION]... [USERNAME]...",
    summary: """
    List the accounts X users follow. Each input line is a record {username} or {user_id}
    or {} (the authenticated user), with max?, pagination_token? (cursor? with --api 1.1)
    and profile?, or a JSON string (the username); each USERNAME argument is one record.
    Each account followed is one JSON line: {"ok":true,"line":N,"input":{...},"result":{user}}.
    """,
    epilogue: """
    Credentials: TW_CONSUMER_KEY, TW_CONSUMER_SECRET, TW_ACCESS_TOKEN, TW_ACCESS_TOKEN_SECRET
    (OAuth 1.0a) or TW_BEARER_TOKEN, else the credentials file. An error that ends a list
    carries "resume": fed back as a record, it continues where the list stopped.
    Exit status: 0 every list complete, 1 some record failed, 2 usage error,
    3 configuration error, 129/130/143 interrupted, 141 output closed. See tw-friends(1).
    """,
    primaryField: "username")

let meOption = OptionSpec("me", help: "list the accounts the authenticated user follows (reads no input)")
let apiOption = OptionSpec("api", value: "VERSION", choices: ["2", "1.1"], help: "X API version: 2 (default) or 1.1")
let pageSizeOption = OptionSpec("page-size", value: "N", integers: 1...5000,
                                help: "accounts per request (default and most: 1000; 5000 with --api 1.1)")
let fieldsOption = OptionSpec("fields", value: "LIST", help: "user fields to ask for, comma-separated (v2's user.fields)")
let engineDefaults = EngineSettings(parallel: 4)

let status = ToolMain.run(tool, options: [meOption, apiOption, pageSizeOption, fieldsOption]
    + XSetup.costOptions + engineDefaults.requestOptions(apiBaseHelp: XSetup.apiBaseHelp)) { arguments throws(StartupError) in
    let settings = engineDefaults.reading(arguments)
    let legacy = arguments.value(apiOption) == "1.1"
    let pageSize = arguments.integer(pageSizeOption, default: legacy ? 5000 : 1000)
    if !legacy && pageSize > 1000 { throw .usage("--page-size: at most 1000 with --api 2") }
    let fields = arguments.value(fieldsOption)
    if legacy && fields != nil { throw .usage("--fields: --api 1.1 lists ids only") }
    if let fields, fields.isEmpty || fields.utf8.contains(where: { !(0x61...0x7A).contains($0) && $0 != 0x5F && $0 != 0x2C }) {
        throw .usage("--fields: expected field names separated by commas, like created_at,public_metrics")
    }
    let me = arguments.isSet(meOption)
    if me && !arguments.positional.isEmpty { throw .usage("--me takes no USERNAME arguments") }
    let x = try XSetup(arguments: arguments, tool: tool, dryRun: settings.dryRun, priced: true)
    let lister = FriendLister(x: x, legacy: legacy, pageSize: pageSize, fields: fields)
    let engine = try Engine(settings, tool: tool)
    return try EventLoop(tool: tool, arguments: arguments, source: me ? .records([JSON.object()]) : .lines(fd: 0),
                         engine: engine).run(lister)
}
exit(status.rawValue)
