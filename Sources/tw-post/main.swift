// tw-post: posts to X, one post per record.
import Glibc
import Socialpipe
import SocialpipeX
import TwPostMedia

let tool = ToolDescription(
    name: "tw-post",
    usage: "[OPTION]... [TEXT]...",
    summary: """
    Post to X. Each input line is a record {text, reply_to?, quote?, media_ids?, media?,
    profile?} or a JSON string (the text); each TEXT argument is one post. media lists up
    to 4 files to upload and attach: paths inside --media-dir, or {path, alt?, category?}.
    Each outcome is one JSON line: {"ok":true,"line":N,"input":{...},"result":{"id","text"}}.
    """,
    epilogue: """
    Credentials: TW_CONSUMER_KEY, TW_CONSUMER_SECRET, TW_ACCESS_TOKEN, TW_ACCESS_TOKEN_SECRET
    (OAuth 1.0a) or TW_BEARER_TOKEN (OAuth 2.0 user token), else the credentials file.
    A post is never sent twice: one that may have been applied ends "ambiguous".
    Exit status: 0 every post made, 1 some record failed, 2 usage error,
    3 configuration error, 129/130/143 interrupted, 141 output closed. See tw-post(1).
    """,
    primaryField: "text")

let threadOption = OptionSpec("thread", help: "each post replies to the one before it")
let apiOption = OptionSpec("api", value: "VERSION", choices: ["2", "1.1"], help: "X API version: 2 (default) or 1.1")
let maxLengthOption = OptionSpec("max-length", value: "N", integers: 1...100_000,
                                 help: "longest post by X's weighted count (default 280)")
let noLengthCheckOption = OptionSpec("no-length-check", help: "send posts of any length (for accounts allowed long posts)")
let mediaDirOption = OptionSpec("media-dir", value: "DIR",
                                help: "the directory media paths are in; none may lead out of it (default .)")
let engineDefaults = EngineSettings(parallel: 1)

let status = ToolMain.run(tool, options: [threadOption, apiOption, maxLengthOption, noLengthCheckOption, mediaDirOption]
    + XSetup.costOptions + engineDefaults.requestOptions(apiBaseHelp: XSetup.apiBaseHelp)) { arguments throws(StartupError) in
    let settings = engineDefaults.reading(arguments)
    let mediaDirectory: ConfinedDirectory
    do throws(LocalFile.Refusal) {
        mediaDirectory = try ConfinedDirectory(arguments.value(mediaDirOption) ?? ".")
    } catch {
        throw .usage("--media-dir: \(error.message)")
    }
    let x = try XSetup(arguments: arguments, tool: tool, dryRun: settings.dryRun, priced: true)
    let poster = TwitterPoster(x: x, legacy: arguments.value(apiOption) == "1.1", thread: arguments.isSet(threadOption),
        maxLength: arguments.isSet(noLengthCheckOption) ? nil : arguments.integer(maxLengthOption, default: 280),
        mediaDirectory: mediaDirectory)
    return try EventLoop(tool: tool, arguments: arguments, engine: Engine(settings, tool: tool)).run(poster)
}
exit(status.rawValue)
