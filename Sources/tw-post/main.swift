// tw-post: posts to X, one post per record.
import Glibc
import Socialpipe

let tool = ToolDescription(
    name: "tw-post",
    usage: "[OPTION]... [TEXT]...",
    summary: """
    Post to X. Each input line is a record {text, reply_to?, quote?, media_ids?, profile?}
    or a JSON string (the text); each TEXT argument is one post. Each outcome is one
    JSON line: {"ok":true,"line":N,"input":{...},"result":{"id","text"}}.
    """,
    epilogue: """
    Credentials: TW_CONSUMER_KEY, TW_CONSUMER_SECRET, TW_ACCESS_TOKEN, TW_ACCESS_TOKEN_SECRET
    (OAuth 1.0a) or TW_BEARER_TOKEN (OAuth 2.0 user token), else the credentials file.
    A post is never sent twice: one that may have been applied ends "ambiguous".
    Exit status: 0 every post made, 1 some record failed, 2 usage error,
    3 configuration error, 129/130/143 interrupted, 141 output closed. See tw-post(1).
    """,
    primaryField: "text")

let parser = ArgumentParser(tool: tool, options: [
    OptionSpec("thread", help: "each post replies to the one before it"),
    OptionSpec("api", value: "VERSION", choices: ["2", "1.1"], help: "X API version: 2 (default) or 1.1"),
    OptionSpec("max-length", value: "N", integers: 1...100_000, help: "longest post by X's weighted count (default 280)"),
    OptionSpec("no-length-check", help: "send posts of any length (for accounts allowed long posts)"),
] + requestOptions(apiBaseHelp: "X API base URL (default $TW_API_BASE, else https://api.x.com)", parallelDefault: 1))

StandardStreams.prepare()
let arguments = parser.parse(Array(CommandLine.arguments.dropFirst()))
let apiBase = APIBase.resolve(option: arguments.value("api-base"), environmentVariable: "TW_API_BASE",
                              fallback: "https://api.x.com")
let credentials = CredentialStore.load(arguments)
if !credentials.mayHaveTwitterCredentials && !arguments.flag("dry-run") {
    Diagnostics.configurationError("no X credentials: set TW_CONSUMER_KEY, TW_CONSUMER_SECRET, TW_ACCESS_TOKEN and "
        + "TW_ACCESS_TOKEN_SECRET (or TW_BEARER_TOKEN), or give a credentials file (see tw-post(1))")
}
let poster = TwitterPoster(
    credentials: credentials, apiBase: apiBase, version: arguments.value("api") ?? "2",
    thread: arguments.flag("thread"),
    maxLength: arguments.flag("no-length-check") ? nil : arguments.integer("max-length", default: 280),
    dryRun: arguments.flag("dry-run"))
let engine = RequestEngine(tool: tool, arguments: arguments, handler: poster, defaultParallel: 1)
RecordLoop(tool: tool, arguments: arguments, handler: engine).run(engine: engine)
