// fb-perm-check: does this token hold the permission? Answers in exit statuses.
import Glibc
import Socialpipe
import SocialpipeGraph

let tool = ToolDescription(
    name: "fb-perm-check",
    usage: "[OPTION]... [PERMISSION]...",
    summary: """
    Check which permissions a Facebook user granted the app. Each input line is a record
    {permission} or {permissions: [...]}, with user? (default me) and profile?, or a JSON
    string (the permission); each PERMISSION argument is one record. Each outcome is one
    JSON line: {"ok":true,"line":N,"input":{...},"result":{"user","permission","status","granted"}}.
    """,
    epilogue: """
    Credentials: FB_ACCESS_TOKEN, FB_APP_SECRET (adds appsecret_proof), FB_APP_ID (with the
    secret, needed by --token), else the credentials file's facebook section.
    Exit status: 0 every record answered and every permission granted, 1 some permission
    not granted or some record failed, 2 usage error, 3 configuration error,
    129/130/143 interrupted, 141 output closed. See fb-perm-check(1).
    """,
    primaryField: "permission")

let tokenOption = OptionSpec("token", help: "also inspect the token with debug_token (needs the app id and secret)")
// The completions read the known names from here (GraphPermissions keeps them).
let listOption = OptionSpec("list-permissions", help: "print the known Graph permission names, one a line, and exit")
// -q, as `grep -q`: the exit status is the answer (contract §5).
let quietOption = OptionSpec(CommonOptions.quiet.long, short: CommonOptions.quiet.short,
                             help: "quiet: write nothing on stdout (the exit status answers), no progress line, "
                                + "no input reminder; messages on stderr still appear")
let engineDefaults = EngineSettings(parallel: 4)
let options = [GraphSetup.versionOption, tokenOption, listOption]
    + engineDefaults.requestOptions(apiBaseHelp: GraphSetup.apiBaseHelp).map {
        $0.long == quietOption.long ? quietOption : $0
    }

let status = ToolMain.run(tool, options: options) { arguments throws(StartupError) in
    if arguments.isSet(listOption) {
        var names = GraphPermissions.known.joined(separator: "\n") + "\n"
        _ = names.withUTF8 { writeAll(fd: 1, $0) }
        return .success
    }
    let settings = engineDefaults.reading(arguments)
    let graph = try GraphSetup(arguments: arguments, tool: tool)
    let inspectsToken = arguments.isSet(tokenOption)
    if inspectsToken && !settings.dryRun
        && !graph.credentials.mayHave({ $0.appID != nil && $0.appSecret != nil }) {
        throw .configuration("--token needs the app's id and secret: set FB_APP_ID and FB_APP_SECRET, "
            + "or facebook.app_id and facebook.app_secret in the credentials profile")
    }
    let checker = PermissionChecker(graph: graph, inspectsToken: inspectsToken,
                                    verbose: arguments.isSet(CommonOptions.verbose))
    let engine = try Engine(settings, tool: tool)
    // debug_token travels in a batch (see PermissionChecker.tokenRequest).
    engine.batching = GraphBatching(setup: graph, maximumBatch: GraphBatching.largest)
    // -q: the exit status is the answer; nothing on stdout.
    var outputFD: Int32 = 1
    if arguments.isSet(CommonOptions.quiet) {
        outputFD = open("/dev/null", O_WRONLY | O_CLOEXEC)
        if outputFD < 0 { throw .configuration("cannot open /dev/null: \(String(cString: strerror(errno)))") }
    }
    return try EventLoop(tool: tool, arguments: arguments, outputFD: outputFD, engine: engine).run(checker)
}
exit(status.rawValue)
