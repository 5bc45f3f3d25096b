// tw-auth: obtains, checks and revokes the X credentials the other tools use.
import Glibc
import Socialpipe
import SocialpipeInteractive
import SocialpipeX

let tool = ToolDescription(
    name: "tw-auth",
    usage: "COMMAND [OPTION]...",
    summary: """
    Get, check and revoke X credentials, stored in a profile of the credentials file.
      pin       OAuth 1.0a with a PIN: the app's key and secret, a page to authorize, the PIN
      oauth2    OAuth 2.0 with PKCE: a page to authorize, the redirect on a loopback port
      app       an app-only bearer token from the app's key and secret
      status    whether a profile's credentials work, and as whom (--all: every profile)
      logout    revoke the profile's X tokens and remove them from the file
    Questions and pages go to stderr; answers are read from the terminal, never from
    arguments. stdout gets one JSON line per profile stored or checked, with no secret.
    """,
    epilogue: """
    Keys and secrets come from TW_CONSUMER_KEY and TW_CONSUMER_SECRET, the profile, or a
    question. Exit status: 0 done (status: every profile valid), 1 a flow refused or a
    token invalid, 2 usage error, 3 configuration error. See tw-auth(1).
    """,
    primaryField: nil,
    commands: TwitterAuth.Command.allCases.map(\.rawValue))

let accessOption = OptionSpec("access", value: "LEVEL", choices: ["read", "write"],
                              help: "pin: ask for read or write access (default: the app's setting)")
let scopesOption = OptionSpec("scopes", value: "LIST",
                              help: "oauth2: scopes, space-separated (default tweet.read tweet.write users.read follows.read offline.access media.write)")
let clientIDOption = OptionSpec("client-id", value: "ID", help: "oauth2: the app's OAuth 2.0 client ID")
let redirectOption = OptionSpec("redirect-uri", value: "URI",
                                help: "oauth2: the redirect URI registered for the app (default http://127.0.0.1:8739/callback)")
let noBrowserOption = OptionSpec("no-browser", help: "oauth2: paste the redirected address instead of listening for it")

let status = ToolMain.run(tool, options: [
    InteractiveOptions.all, accessOption, scopesOption, clientIDOption, redirectOption, noBrowserOption,
    CommonOptions.profile, CommonOptions.credentials, CommonOptions.apiBase(help: XSetup.apiBaseHelp),
    CommonOptions.cacert, CommonOptions.timeout, CommonOptions.verbose, CommonOptions.help, CommonOptions.version,
]) { (command: TwitterAuth.Command, arguments) throws(StartupError) in
    let apiBaseOption = arguments.value(CommonOptions.apiBase(help: XSetup.apiBaseHelp))
    let apiBase = try APIBase.resolve(option: apiBaseOption, environmentVariable: "TW_API_BASE", fallback: "https://api.x.com")
    try arguments.refuse([(InteractiveOptions.all, .status), (accessOption, .pin), (scopesOption, .oauth2),
                          (clientIDOption, .oauth2), (redirectOption, .oauth2), (noBrowserOption, .oauth2)], outside: command)
    try InteractiveOptions.refuseAllWithProfile(arguments)
    let start = try ProfileEditor.Start(arguments)

    let records: [JSON]
    var x: XSetup?
    switch command {
    case .status:
        x = try XSetup(arguments: arguments, tool: tool, dryRun: false)
        records = arguments.isSet(InteractiveOptions.all)
            ? try start.everyProfile(where: TwitterCredentials.held, else: "X credentials")
            : [try start.checkedProfile(where: TwitterCredentials.held) {
                "profile \"\($0)\" has no X credentials in \(start.path): get them with tw-auth pin --profile \($0) "
                    + "(or tw-auth oauth2 --profile \($0))"
            }]
    case .logout:
        records = [try start.existingProfile(else: "no profile to log out of")]
    case .pin, .oauth2, .app:
        records = [ProfileEditor.Start.record(start.chosen ?? "default")]
    }
    // Questions need a terminal; checks and logouts do not, nor flows whose answers are all known.
    let unanswered: Bool
    switch command {
    case .pin: unanswered = true
    case .oauth2: unanswered = arguments.isSet(noBrowserOption) || arguments.value(clientIDOption) == nil
        && !start.holds([("TW_CLIENT_ID", ["oauth2", "client_id"])], in: "twitter", of: start.chosen ?? "default")
    case .app: unanswered = !start.holds([("TW_CONSUMER_KEY", ["consumer_key"]), ("TW_CONSUMER_SECRET", ["consumer_secret"])],
                                         in: "twitter", of: start.chosen ?? "default")
    case .status, .logout: unanswered = false
    }
    let terminal = try Terminal.forQuestions(asks: [.pin, .oauth2, .app].contains(command), needs: unanswered)

    let auth = TwitterAuth(command: command, apiBase: apiBase, path: start.path, terminal: terminal, x: x)
    auth.service.baseDescription = APIBase.described(apiBase, option: apiBaseOption, environmentVariable: "TW_API_BASE")
    auth.access = arguments.value(accessOption)
    if let scopes = arguments.value(scopesOption) { auth.scopes = scopes }
    auth.clientID = arguments.value(clientIDOption)
    if let redirect = arguments.value(redirectOption) { auth.redirect = redirect }
    auth.pasteRedirect = arguments.isSet(noBrowserOption)
    let engine = try Engine(EngineSettings(parallel: 4).reading(arguments), tool: tool)
    return try EventLoop(tool: tool, arguments: arguments, source: .records(records), style: .commandLines, engine: engine,
                         watchesSignals: false).run(auth)
}
exit(status.rawValue)
