// fb-feed: publishes posts to a Facebook Page, one post per record.
import Glibc
import Socialpipe
import SocialpipeGraph

let tool = ToolDescription(
    name: "fb-feed",
    usage: "[OPTION]... [MESSAGE]...",
    summary: """
    Publish posts to a Facebook Page. Each input line is a record {message?, link?, page?,
    published?, scheduled_publish_time?, params?, profile?} or a JSON string (the message);
    each MESSAGE argument is one post. Each outcome is one JSON line:
    {"ok":true,"line":N,"input":{...},"result":{"id":"PAGEID_POSTID"}}.
    """,
    epilogue: """
    Credentials: FB_ACCESS_TOKEN (a Page access token), FB_APP_SECRET (adds appsecret_proof),
    else the credentials file's facebook section. A post is never sent twice: one that may
    have been applied ends "ambiguous".
    Exit status: 0 every post made, 1 some record failed, 2 usage error,
    3 configuration error, 129/130/143 interrupted, 141 output closed. See fb-feed(1).
    """,
    primaryField: "message")

let batchOption = OptionSpec("batch", value: "N", integers: 2...GraphBatching.largest,
                             help: "send up to N posts in one batch request (2-50)")
let legacyOption = OptionSpec("allow-legacy-fields",
                              help: "send picture, name, caption, description and app_id anyway (Facebook ignores them)")

let engineDefaults = EngineSettings(parallel: 1)

let status = ToolMain.run(tool, options: [GraphSetup.versionOption, batchOption, legacyOption]
    + engineDefaults.requestOptions(apiBaseHelp: GraphSetup.apiBaseHelp)) { arguments throws(StartupError) in
    let settings = engineDefaults.reading(arguments)
    let graph = try GraphSetup(arguments: arguments, tool: tool)
    let batchSize = arguments.isSet(batchOption) ? arguments.integer(batchOption, default: GraphBatching.largest) : nil
    let poster = FeedPoster(graph: graph, allowLegacyFields: arguments.isSet(legacyOption), batches: batchSize != nil)
    let engine = try Engine(settings, tool: tool)
    if let batchSize { engine.batching = GraphBatching(setup: graph, maximumBatch: batchSize) }
    return try EventLoop(tool: tool, arguments: arguments, engine: engine).run(poster)
}
exit(status.rawValue)
