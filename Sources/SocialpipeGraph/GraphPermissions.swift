import Socialpipe
/// The permissions a person can grant an app through Facebook Login today,
/// from Meta's Permissions Reference
/// (https://developers.facebook.com/docs/permissions, as of November 2026).
/// The names removed from the API are not here (fb-perm-check answers them
/// `removed`), nor are the scopes of Instagram Login and Threads, which are
/// granted outside Facebook Login and never appear in `/me/permissions`.
/// fb-perm-check's completions take this list from `--list-permissions`, so
/// that it is kept here only.
public enum GraphPermissions {
    public static let known = [
        "ads_management", "ads_read", "attribution_read", "business_management", "catalog_management",
        "commerce_account_manage_orders", "commerce_account_read_orders", "commerce_account_read_reports",
        "commerce_account_read_settings", "commerce_manage_accounts", "email", "gaming_profile", "gaming_user_picture",
        "instagram_basic", "instagram_branded_content_ads_brand", "instagram_branded_content_brand",
        "instagram_branded_content_creator", "instagram_content_publish", "instagram_manage_comments",
        "instagram_manage_events", "instagram_manage_insights", "instagram_manage_messages",
        "instagram_shopping_tag_products", "leads_retrieval", "manage_fundraisers",
        "pages_events", "pages_manage_ads", "pages_manage_cta", "pages_manage_engagement", "pages_manage_instant_articles",
        "pages_manage_metadata", "pages_manage_posts", "pages_messaging", "pages_read_engagement",
        "pages_read_user_content", "pages_show_list", "pages_user_gender", "pages_user_locale", "pages_user_timezone",
        "public_profile", "publish_video", "read_audience_network_insights", "read_insights",
        "user_age_range", "user_birthday", "user_friends", "user_gender", "user_hometown", "user_likes", "user_link",
        "user_location", "user_messenger_contact", "user_photos", "user_posts", "user_videos",
        "whatsapp_business_management", "whatsapp_business_manage_events", "whatsapp_business_messaging",
    ]

    /// What to say of `name` when it is not a known permission, naming the
    /// known one it is likely a slip of; nil for a known name.
    public static func warning(about name: String) -> String? {
        if known.contains(name) { return nil }
        let hint = Spelling.nearest(to: name, among: known).map { ": did you mean \($0)?" }
            ?? " (fb-perm-check --list-permissions lists the known ones)"
        return "\"\(name)\" is not a known Graph permission" + hint
    }
}
