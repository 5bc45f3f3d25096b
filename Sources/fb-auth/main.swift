// fb-auth: obtains, checks and removes the Facebook credentials the other tools use.
import Glibc
import Socialpipe
import SocialpipeInteractive
import SocialpipeGraph

let tool = ToolDescription(
    name: "fb-auth",
    usage: "COMMAND [OPTION]...",
    summary: """
    Get, check and remove Facebook credentials, stored in a profile of the credentials file.
      device    Login for Devices: a code to enter at facebook.com/device, then a long-lived user token
      exchange  a short-lived user token (Graph API Explorer), pasted, for a long-lived one
      pages     the Pages the profile's user manages; --store PAGE_ID keeps that Page's token
      status    whether a profile's token is valid, its type, expiry and scopes (--all: every profile)
      logout    revoke the app's permissions and remove the profile's Facebook tokens
    Questions and codes go to stderr; answers are read from the terminal, never from
    arguments. stdout gets one JSON line per profile stored or checked (pages: per Page),
    with no secret.
    """,
    epilogue: """
    The app id, client token and app secret come from FB_APP_ID, FB_CLIENT_TOKEN and
    FB_APP_SECRET, the profile, or a question. Exit status: 0 done (status: every profile
    valid), 1 a flow refused or a token invalid, 2 usage error, 3 configuration error.
    See fb-auth(1).
    """,
    primaryField: nil,
    commands: FacebookAuth.Command.allCases.map(\.rawValue))

let scopesOption = OptionSpec("scopes", value: "LIST",
                              help: "device: permissions to ask for (default pages_show_list,pages_manage_posts,pages_read_engagement)")
let storeOption = OptionSpec("store", value: "PAGE_ID", help: "pages: store this Page's token as the profile's token")
let apiBaseOption = CommonOptions.apiBase(help: GraphSetup.apiBaseHelp)

let status = ToolMain.run(tool, options: [
    InteractiveOptions.all, scopesOption, storeOption, GraphSetup.versionOption,
    CommonOptions.profile, CommonOptions.credentials, apiBaseOption,
    CommonOptions.cacert, CommonOptions.timeout, CommonOptions.verbose, CommonOptions.help, CommonOptions.version,
]) { (command: FacebookAuth.Command, arguments) throws(StartupError) in
    let versionRoot = try GraphSetup.versionRoot(arguments)
    try arguments.refuse([(InteractiveOptions.all, .status)], outside: command)
    try InteractiveOptions.refuseAllWithProfile(arguments)
    try arguments.refuse([(scopesOption, .device), (storeOption, .pages)], outside: command)
    let scopes = arguments.value(scopesOption).map { $0.split { $0 == "," || $0 == " " }.joined(separator: ",") }
    if let scopes, scopes.isEmpty || !scopes.utf8.allSatisfy({ (0x61...0x7A).contains($0) || $0 == 0x5F || $0 == 0x2C }) {
        throw .usage("--scopes: expected permission names (a-z and _) separated by commas or spaces")
    }
    let page = arguments.value(storeOption)
    if let page, page.isEmpty || page.utf8.count > 30 || !page.utf8.allSatisfy({ (0x30...0x39).contains($0) }) {
        throw .usage("--store: expected a Page id (digits), got '\(page)'")
    }
    let start = try ProfileEditor.Start(arguments)

    let records: [JSON]
    switch command {
    case .status where arguments.isSet(InteractiveOptions.all):
        records = try start.everyProfile(where: FacebookCredentials.held, else: "a Facebook token")
    case .status:
        // As the other tools choose: the profile, else the environment's token.
        if let chosen = start.chosen {
            guard start.profiles.contains(chosen) else { throw .configuration(start.unknown(chosen)) }
            records = [try start.checkedProfile(where: FacebookCredentials.held) {
                "profile \"\($0)\" has no Facebook token in \(start.path): get one with fb-auth device --profile \($0)"
            }]
        } else if Environment.nonEmpty("FB_ACCESS_TOKEN") != nil {
            records = [ProfileEditor.Start.record(nil)]
        } else {
            throw .configuration("nothing to check: no profile in \(start.path) and no FB_ACCESS_TOKEN (see fb-auth device)")
        }
    case .pages, .logout:
        records = [try start.existingProfile(else: "no profile chosen")]
    case .device, .exchange:
        records = [ProfileEditor.Start.record(start.chosen ?? "default")]
    }
    // Questions need a terminal; exchange always asks (the token); device when a value is unknown; checks never do.
    let deviceValues = [("FB_APP_ID", ["app_id"]), ("FB_CLIENT_TOKEN", ["client_token"]), ("FB_APP_SECRET", ["app_secret"])]
    let unanswered = command == .exchange
        || (command == .device && !start.holds(deviceValues, in: "facebook", of: start.chosen ?? "default"))
    let terminal = try Terminal.forQuestions(asks: [.device, .exchange].contains(command), needs: unanswered)

    let auth = FacebookAuth(command: command, versionRoot: versionRoot, path: start.path, terminal: terminal)
    auth.service.baseDescription = GraphSetup.baseDescription(arguments, versionRoot: versionRoot)
    if let scopes { auth.scopes = scopes }
    auth.storePage = page
    let engine = try Engine(EngineSettings(parallel: 4).reading(arguments), tool: tool)
    // debug_token travels in a batch (see StatusJob).
    engine.batching = GraphBatching(versionRoot: versionRoot, maximumBatch: 1)
    return try EventLoop(tool: tool, arguments: arguments, source: .records(records), style: .commandLines, engine: engine,
                         watchesSignals: false).run(auth)
}
exit(status.rawValue)
