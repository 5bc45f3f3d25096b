/// The base URL of an API: `--api-base`, else its environment variable, else the real host.
public enum APIBase {
    /// The base without a trailing `/`; a usage error (exit 2) when it is not an http(s) URL.
    public static func resolve(option: String?, environment: String?, fallback: String) -> String {
        var base = option ?? environment.flatMap { $0.isEmpty ? nil : $0 } ?? fallback
        while base.hasSuffix("/") { base.removeLast() }
        do {
            let url = try RequestURL(base)
            guard url.query == nil else { Diagnostics.usageError("--api-base must not have a query: \(base)") }
        } catch {
            Diagnostics.usageError("--api-base: \(error.message)")
        }
        return base
    }
}
