import Glibc
import Socialpipe

/// What X charges for the requests the tools make (contract §7): X bills by
/// use since 2026, each request taking its price from the app's credits
/// (https://docs.x.com/x-api/getting-started/pricing: reads per resource
/// returned, writes per request, $0.001 a resource of an owned read).
/// Built in, and any price replaced by a prices file.
public struct XPrices: Sendable {
    /// The keys of the price table and of a prices file.
    public enum Key: String, CaseIterable, Sendable {
        /// A post whose text has no URL.
        case postCreate = "post_create"
        /// A post whose text holds a URL (as twitter-text finds them).
        case postCreateURL = "post_create_url"
        /// An alt text set on uploaded media.
        case mediaMetadata = "media_metadata"
        /// A user looked up.
        case userRead = "user_read"
        /// Each account of a following page of another account.
        case followingRead = "following_read"
        /// Each account of a following page of the authenticated user's own list.
        case ownedRead = "owned_read"

        var builtIn: Money {
            switch self {
            case .postCreate: return Money(micros: 15_000)
            case .postCreateURL: return Money(micros: 200_000)
            case .mediaMetadata: return Money(micros: 5_000)
            case .userRead, .followingRead: return Money(micros: 10_000)
            case .ownedRead: return Money(micros: 1_000)
            }
        }
    }

    private var table: [Key: Money] = [:]

    /// X's published prices.
    public init() {
        for key in Key.allCases { table[key] = key.builtIn }
    }

    public subscript(key: Key) -> Money { table[key] ?? key.builtIn }

    /// `--prices FILE`: a prices file whose prices replace the built-in ones.
    public static let option = OptionSpec("prices", value: "FILE",
                                          help: "X prices to estimate with, {\"x\": {KEY: DOLLARS}} (default $SOCIALPIPE_PRICES, "
                                              + "else ~/.config/socialpipe/prices.json when it exists)")

    /// The prices of a run: the built-in ones, with those of the prices file
    /// in use replaced (`--prices`, else `$SOCIALPIPE_PRICES`, else the
    /// default file when it exists). A file that cannot be read or is not
    /// a prices file is a configuration error.
    public static func load(_ arguments: ParsedArguments) throws(StartupError) -> XPrices {
        let named = arguments.value(option) ?? Environment.nonEmpty("SOCIALPIPE_PRICES")
        guard let path = named ?? (Environment.nonEmpty("XDG_CONFIG_HOME") ?? Environment.value("HOME").map { $0 + "/.config" })
            .map({ $0 + "/socialpipe/prices.json" }) else { return XPrices() }
        let bytes: [UInt8]
        do {
            bytes = try LocalFile.read(path, rules: [])
        } catch {
            if named == nil && error.errorNumber == ENOENT { return XPrices() }
            throw .configuration("prices file: \(error.message)")
        }
        return try parse(bytes, path: path)
    }

    /// The prices a file's text `bytes` (from `path`) sets.
    static func parse(_ bytes: [UInt8], path: String) throws(StartupError) -> XPrices {
        func problem(_ text: String) -> StartupError { .configuration("prices file \(path): \(text)") }
        let document: JSON
        switch bytes.withUnsafeBufferPointer({ JSON.parse($0) }) {
        case .success(let value): document = value
        case .failure(let error):
            throw problem("invalid JSON at line \(error.line), column \(error.lineColumn): \(error.message)")
        }
        let shape = "expected {\"x\": {KEY: DOLLARS, …}} with the keys " + Key.allCases.map(\.rawValue).joined(separator: ", ")
        guard document.kind == .object, document.members.allSatisfy({ $0.key == "x" }),
              let section = document["x"], section.kind == .object else { throw problem(shape) }
        var prices = XPrices()
        for (name, value) in section.members {
            guard let key = Key(rawValue: name) else {
                let names = Key.allCases.map(\.rawValue)
                let hint = Spelling.nearest(to: name, among: names).map { "did you mean \"\($0)\"? " } ?? ""
                throw problem("unknown key \"x.\(name)\" (\(hint)the keys: " + names.joined(separator: ", ") + ")")
            }
            guard let price = Money(value) else {
                throw problem("x.\(name) must be a number of dollars from 0 to 1000000000")
            }
            prices.table[key] = price
        }
        return prices
    }
}

/// What an X app's plan allows (contract §7): a self-serve (pay-per-usage)
/// app lost quote posts and more than one cashtag a post in 2026; an
/// Enterprise app keeps them.
public enum XPlan: String, CaseIterable, Sendable {
    case selfServe = "self-serve"
    case enterprise

    /// `--plan`: overrides every profile's `twitter.plan` for the run.
    public static let option = OptionSpec("plan", value: "PLAN", choices: allCases.map(\.rawValue),
                                          help: "the X app's plan: self-serve (default, or the profile's twitter.plan) or enterprise")
}
