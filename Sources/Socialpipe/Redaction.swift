import CJansson
import Glibc

/// Secret values in echoed input are replaced (contract §2).
public enum Redaction {
    /// The replacement text.
    public static let placeholder = "[redacted]"

    /// Keys ending in `_token` that name a position, not a credential.
    static let notCredentials: Set<String> = ["pagination_token", "next_token", "previous_token"]

    /// Whether a member named `key` holds a secret.
    public static func isSecret(_ key: String) -> Bool {
        if key.hasSuffix("_secret") || key == "password" || key == "bearer_token" { return true }
        if key.hasSuffix("_token") { return !notCredentials.contains(key) }
        return false
    }

    /// Walks jansson's structures directly: this runs for every record.
    static func containsSecret(_ raw: UnsafeMutablePointer<json_t>) -> Bool {
        switch raw.pointee.type {
        case JSON_OBJECT:
            var iterator = json_object_iter(raw)
            while let current = iterator {
                if let key = json_object_iter_key(current), isSecret(cKey: key) { return true }
                if let member = json_object_iter_value(current), containsSecret(member) { return true }
                iterator = json_object_iter_next(raw, current)
            }
            return false
        case JSON_ARRAY:
            for index in 0..<json_array_size(raw) {
                if let element = json_array_get(raw, index), containsSecret(element) { return true }
            }
            return false
        default:
            return false
        }
    }

    private static func isSecret(cKey key: UnsafePointer<CChar>) -> Bool {
        let length = strlen(key)
        let bytes = UnsafeRawPointer(key).assumingMemoryBound(to: UInt8.self)
        func endsWith(_ suffix: StaticString) -> Bool {
            let count = suffix.utf8CodeUnitCount
            return length >= count && memcmp(bytes + (length - count), suffix.utf8Start, count) == 0
        }
        guard endsWith("_secret") || endsWith("_token") || endsWith("password") else { return false }
        return isSecret(String(cString: key))
    }

    private static func redactInPlace(_ value: JSON) {
        switch value.kind {
        case .object:
            for (key, member) in value.members {
                if isSecret(key) {
                    value.set(member: key, string: placeholder)
                } else {
                    redactInPlace(member)
                }
            }
        case .array:
            for element in value.elements { redactInPlace(element) }
        default:
            break
        }
    }

    /// `record` itself when it holds no secret, else a copy with every secret value replaced.
    public static func redacted(_ record: JSON) -> JSON {
        guard containsSecret(record.raw) else { return record }
        let copy = record.deepCopy()
        redactInPlace(copy)
        return copy
    }

    /// `url` with the values of secret query parameters replaced, for logs and dry runs.
    public static func redactedURL(_ url: String) -> String {
        guard let question = url.firstIndex(of: "?") else { return url }
        let query = url[url.index(after: question)...]
        let pairs = query.split(separator: "&", omittingEmptySubsequences: false).map { pair -> String in
            guard let equals = pair.firstIndex(of: "=") else { return String(pair) }
            let name = String(pair[..<equals])
            return isSecret(name) || name == "appsecret_proof" ? name + "=" + placeholder : String(pair)
        }
        return String(url[...question]) + pairs.joined(separator: "&")
    }

    /// A `Name: value` header line with a secret value replaced. An OAuth 1.0a
    /// Authorization header holds no secret (its signature is not one) and is kept.
    public static func redactedHeader(_ line: String, secretNames: Set<String>) -> String {
        guard let colon = line.firstIndex(of: ":") else { return line }
        let name = line[..<colon].lowercased()
        guard secretNames.contains(name) else { return line }
        let value = line[line.index(after: colon)...].drop { $0 == " " }
        if value.hasPrefix("OAuth ") { return line }
        if let space = value.firstIndex(of: " ") {
            return line[...colon] + " " + value[..<space] + " " + placeholder
        }
        return line[...colon] + " " + placeholder
    }
}
