import Socialpipe
import SocialpipeGraph

/// How a record becomes a Page post (`POST /{page}/feed`), checked before
/// anything is sent: the fields Facebook still reads, a schedule inside its
/// window, and a plain refusal of the link-preview fields it has ignored
/// since July 2017 (graph-api.md §2, §3).
final class FeedPoster: RecordTool {
    let graph: GraphSetup
    /// Whether the legacy fields are sent anyway (with a warning).
    let allowLegacyFields: Bool
    /// Whether posts may travel in batches (`--batch`).
    let batches: Bool
    /// Legacy fields already warned about in this run.
    private var warned: Set<String> = []

    init(graph: GraphSetup, allowLegacyFields: Bool, batches: Bool) {
        self.graph = graph
        self.allowLegacyFields = allowLegacyFields
        self.batches = batches
    }

    func start(_ record: Record, reply: Reply) -> Job? {
        FeedJob(record: record, reply: reply, poster: self)
    }

    /// Link-preview fields Facebook ignores since 2017, and `app_id`, which
    /// was never a post field (it belongs to a Feed Dialog URL).
    static let legacyFields = ["picture", "name", "caption", "description", "app_id"]

    /// The record's own fields, which `params` may not repeat.
    static let recordFields: Set<String> = ["message", "link", "page", "published", "scheduled_publish_time", "params", "profile"]

    /// The other fields of a Page post (the Page feed reference and the
    /// business SDK's parameter list), passed through from `params`.
    static let documentedParams: Set<String> = [
        "actions", "album_id", "android_key_hash", "application_id", "asked_fun_fact_prompt_id", "asset3d_id",
        "associated_id", "attach_place_suggestion", "attached_media", "audience_exp", "backdated_time",
        "backdated_time_granularity", "breaking_news", "breaking_news_expiration", "call_to_action", "child_attachments",
        "client_mutation_id", "composer_entry_picker", "composer_entry_point", "composer_entry_time",
        "composer_session_events_log", "composer_session_id", "composer_source_surface", "composer_type",
        "connection_class", "content_attachment", "coordinates", "cta_link", "cta_type", "direct_share_status",
        "enforce_link_ownership", "expanded_height", "expanded_width", "feed_targeting", "fields", "formatting",
        "fun_fact_prompt_id", "fun_fact_toastee_id", "height", "home_checkin_city_id", "image_crops",
        "implicit_with_tags", "instant_game_entry_point_data", "ios_bundle_id", "is_backout_draft", "is_boost_intended",
        "is_explicit_location", "is_explicit_share", "is_group_linking_post", "is_photo_container", "location_source_id",
        "manual_privacy", "multi_share_end_card", "multi_share_optimized", "nectar_module", "object_attachment",
        "og_action_type_id", "og_hide_object_attachment", "og_icon_id", "og_object_id", "og_phrase",
        "og_set_profile_badge", "og_suggestion_mechanism", "page_recommendation", "place", "place_attachment_setting",
        "place_list", "place_list_data", "post_surfaces_blacklist", "posting_to_redspace", "privacy", "prompt_id",
        "prompt_tracking_string", "properties", "proxied_app_id", "publish_event_id", "quote", "ref",
        "referenceable_image_ids", "referral_id", "sponsor_id", "sponsor_relationship", "suggested_place_id", "tags",
        "target_surface", "targeting", "text_format_metadata", "text_format_preset_id", "text_only_place",
        "time_since_original_post", "title", "tracking_info", "unpublished_content_type", "user_selected_tags",
        "video_start_time_ms", "viewer_coordinates", "width",
    ]

    /// The scheduling window Facebook enforces: 10 minutes to 30 days ahead.
    static let earliestSchedule: Int64 = 600
    static let latestSchedule: Int64 = 30 * 86_400

    /// A post as it will be sent: the Page and the form fields, in order.
    struct Post {
        var page: String
        var form: [Parameter]
    }

    func post(of record: Record) throws(RecordError) -> Post {
        let page = try Self.page(of: record)
        let message = try record.string("message") ?? ""
        let link = try record.string("link") ?? ""
        if message.isEmpty && link.isEmpty { throw RecordError(.validation, "empty post: give message or link") }
        if !link.isEmpty && !Self.isWebAddress(link) {
            throw RecordError(.validation, "link must be an absolute http:// or https:// URL")
        }
        var form: [Parameter] = []
        if !message.isEmpty { form.append(Parameter("message", message)) }
        if !link.isEmpty { form.append(Parameter("link", link)) }

        var published: Bool?
        if let value = record.fields["published"], !value.isNull {
            guard let flag = value.bool else { throw .input("published must be true or false") }
            published = flag
        }
        let scheduled = try Self.schedule(of: record)
        if scheduled != nil {
            if published == true {
                throw RecordError(.validation, "a scheduled post is unpublished until its time: published must be false")
            }
            published = false
        }
        if let published { form.append(Parameter("published", published ? "true" : "false")) }
        if let scheduled { form.append(Parameter("scheduled_publish_time", String(scheduled))) }

        var legacy: [Parameter] = []
        if let params = record.fields["params"], !params.isNull {
            guard params.kind == .object else { throw .input("params must be an object of string values") }
            for (key, value) in params.members {
                if Self.legacyFields.contains(key) {
                    legacy.append(try legacyField(key, value, in: "params."))
                    continue
                }
                try Self.checkParam(key)
                guard let text = value.string else {
                    throw .input("params.\(key) must be a string (give structured values as JSON text)")
                }
                form.append(Parameter(key, text))
            }
        }
        for key in Self.legacyFields {
            if let value = record.fields.member(key), !value.isNull { legacy.append(try legacyField(key, value, in: "")) }
        }
        return Post(page: page, form: form + legacy)
    }

    /// `page`: `me` (the Page of a Page token) or a Page id.
    static func page(of record: Record) throws(RecordError) -> String {
        if let value = record.fields["page"], value.string == "me" { return "me" }
        do {
            return try record.id("page", digits: 1...30) ?? "me"
        } catch {
            throw .input("page must be a Page id (digits) or \"me\"")
        }
    }

    static func isWebAddress(_ text: String) -> Bool {
        let lower = text.lowercased()
        guard let scheme = ["https://", "http://"].first(where: { lower.hasPrefix($0) }),
              text.utf8.count > scheme.utf8.count else { return false }
        return !text.utf8.contains { $0 <= 0x20 || $0 == 0x7F }
    }

    /// `scheduled_publish_time` as an epoch second inside Facebook's window.
    static func schedule(of record: Record) throws(RecordError) -> Int64? {
        guard let value = record.fields["scheduled_publish_time"], !value.isNull else { return nil }
        let time: Int64
        if let seconds = value.integer {
            time = seconds
        } else if let text = value.string, let parsed = Clock.epoch(iso8601: text) {
            time = parsed
        } else {
            throw .input("scheduled_publish_time must be Unix seconds or an ISO 8601 time with a zone, "
                + "like 2026-12-24T10:00:00Z")
        }
        // A record's integer may be any Int64: the difference must not overflow.
        let (difference, overflowed) = time.subtractingReportingOverflow(Int64(Clock.wall()))
        let ahead = overflowed ? (time < 0 ? Int64.min : Int64.max) : difference
        guard ahead >= earliestSchedule && ahead <= latestSchedule else {
            let when = ahead < 0 ? "in the past" : ahead < 3600 ? "\(ahead / 60) minutes ahead" : "\(ahead / 86_400) days ahead"
            throw RecordError(.validation, "scheduled_publish_time \(Clock.iso8601(Double(time)) ?? String(time)) is \(when); "
                + "Facebook schedules posts 10 minutes to 30 days ahead")
        }
        return time
    }

    /// A `params` key other than the legacy fields: documented, and not one
    /// that carries credentials or changes what the request does.
    static func checkParam(_ key: String) throws(RecordError) {
        if recordFields.contains(key) { throw .input("params.\(key): give \(key) as a field of the record") }
        if Redaction.isSecret(key) || ["access_token", "appsecret_proof", "appsecret_time", "method", "batch"].contains(key) {
            throw .input("params.\(key) is not allowed: fb-feed sends the credentials and chooses the method itself")
        }
        guard documentedParams.contains(key) else {
            throw .input("params.\(key) is not a documented field of a Page post")
        }
    }

    /// A legacy field: refused, or with `--allow-legacy-fields` sent with a warning.
    private func legacyField(_ key: String, _ value: JSON, in place: String) throws(RecordError) -> Parameter {
        guard allowLegacyFields else {
            let why = key == "app_id" ? "app_id is not a field of a post (it belongs to the app's settings or a Feed Dialog URL)"
                : "Facebook has ignored picture, name, caption and description on posts since July 2017"
            throw RecordError(.validation, "\(place)\(key): \(why); nothing was sent (--allow-legacy-fields sends it anyway)")
        }
        guard let text = value.string else { throw .input("\(place)\(key) must be a string") }
        if warned.insert(key).inserted {
            Diagnostics.say("warning: sending \(key), which Facebook ignores (since July 2017 for link previews)")
        }
        return Parameter(key, text)
    }
}

/// One post: checked, then sent once (alone or in a batch).
final class FeedJob: Job {
    let record: Record
    let reply: Reply
    private unowned let poster: FeedPoster

    init(record: Record, reply: Reply, poster: FeedPoster) {
        self.record = record
        self.reply = reply
        self.poster = poster
    }

    func begin() -> JobStep {
        do throws(RecordError) {
            let post = try poster.post(of: record)
            let authorizer = try poster.graph.authorizer(for: record)
            var request = poster.graph.request("POST", "/\(post.page)/feed", form: post.form, authorizer: authorizer)
            if poster.batches { request.batchKey = GraphBatching.key(for: authorizer) }
            return .send(request)
        } catch {
            return .fail(error)
        }
    }

    /// A Page post's id as Graph writes it, `PAGEID_POSTID` (digits), or a bare id.
    static func isPostID(_ id: String) -> Bool {
        let parts = id.split(separator: "_", omittingEmptySubsequences: false)
        return parts.count <= 2 && parts.allSatisfy { Record.isID($0, digits: 1...30) }
    }

    /// The created post: `{"id": "PAGEID_POSTID"}` (and any fields asked
    /// for with `params.fields`); without an id the post may still exist.
    private func next(after answer: Answer) -> JobStep {
        guard let created = answer.json, created.kind == .object, let id = created["id"]?.string, Self.isPostID(id) else {
            return .fail(RecordError(.ambiguous, "HTTP \(answer.status) without the created post's id; the post may exist",
                                     status: answer.status))
        }
        // A record's params.fields may ask for more than the id (`from{access_token}`):
        // whatever secret the answer holds stays out of stdout.
        reply.succeed(Redaction.redacted(created))
        return .done
    }

    func received(_ event: JobEvent) -> JobStep {
        event.step(answered: next(after:))
    }
}
