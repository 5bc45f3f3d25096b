import CLinux
import Glibc

/// One command-line option. Tools declare each as a constant and read it
/// through that constant, so a misspelt option is a compile error, not a
/// flag that silently reads `false`.
public struct OptionSpec: Sendable {
    public let long: String
    public let short: Character?
    /// The value's name in the help (`FILE`, `N`…); nil for a flag.
    public let valueName: String?
    /// Accepted values, when they are a fixed set.
    public let choices: [String]
    /// Accepted integers, when the value is a number; checked while parsing,
    /// so that a bad value is a usage error before anything else is looked at.
    public let integers: ClosedRange<Int>?
    /// Accepted decimal numbers (`0.5`, `2.25`), when the value may have a
    /// fraction; checked while parsing, as `integers` are.
    public let decimals: ClosedRange<Double>?
    public let help: String

    public init(_ long: String, short: Character? = nil, value: String? = nil, choices: [String] = [],
                integers: ClosedRange<Int>? = nil, decimals: ClosedRange<Double>? = nil, help: String) {
        self.long = long
        self.short = short
        self.valueName = value
        self.choices = choices
        self.integers = integers
        self.decimals = decimals
        self.help = help
    }
}

/// Name, version and help texts of a command.
public struct ToolDescription: Sendable {
    public let name: String
    /// One line for the usage: what follows the name.
    public let usage: String
    /// What the tool does, a few lines.
    public let summary: String
    /// Closing help paragraphs (records, exit status…).
    public let epilogue: String
    /// The field a string line, `-R` line or argument stands for; nil for none.
    public let primaryField: String?
    /// The commands of an interactive tool (`tw-auth pin`): the first
    /// argument must be one of them, and it is the only one.
    public let commands: [String]

    public init(name: String, usage: String, summary: String, epilogue: String, primaryField: String?,
                commands: [String] = []) {
        self.name = name
        self.usage = usage
        self.summary = summary
        self.epilogue = epilogue
        self.primaryField = primaryField
        self.commands = commands
    }
}

/// The socialpipe version every tool reports.
public let socialpipeVersion = "0.1.0"

/// The options of contract §5. Each tool lists those that mean something for it.
public enum CommonOptions {
    public static let help = OptionSpec("help", short: "h", help: "show this help and exit")
    public static let version = OptionSpec("version", help: "show the version and exit")
    public static let credentials = OptionSpec("credentials", value: "FILE",
        help: "credentials file (default $SOCIALPIPE_CREDENTIALS, else ${XDG_CONFIG_HOME:-~/.config}/socialpipe/credentials.json)")
    public static let profile = OptionSpec("profile", value: "NAME",
        help: "profile in the credentials file (default $SOCIALPIPE_PROFILE, else the file's default)")
    public static let maxLine = OptionSpec("max-line", value: "BYTES", integers: 1...(1 << 30),
        help: "longest accepted input line (default 1048576)")
    /// Up to 2^53, so that every line number stays exact in jq.
    public static let firstLine = OptionSpec("first-line", value: "N", integers: 1...(1 << 53),
        help: "number the first input line N, as in the whole input this is a part of (default 1)")
    public static let rawInput = OptionSpec("raw-input", short: "R",
        help: "each input line, as text, is the record's primary field")
    public static let unordered = OptionSpec("unordered", help: "write outcomes as they complete")
    public static let dryRun = OptionSpec("dry-run", help: "build and sign each request, send nothing")
    /// At least a millisecond: libcurl counts in them, and 0 would mean no timeout at all.
    public static let timeout = OptionSpec("timeout", value: "S", decimals: 0.001...86_400,
        help: "per-request timeout in seconds, fractions allowed (default 30)")
    public static let retries = OptionSpec("retries", value: "N", integers: 0...100,
        help: "retries for retryable failures (default 3)")
    public static let maxWait = OptionSpec("max-wait", value: "S", integers: 0...(86_400 * 7),
        help: "longest rate-limit wait before a record fails (default 900)")
    public static let cacert = OptionSpec("cacert", value: "FILE", help: "trust this CA bundle")
    public static let verbose = OptionSpec("verbose", short: "v",
        help: "log each request and response status on stderr, with the API's message for an error")
    public static let quiet = OptionSpec("quiet", short: "q",
                                         help: "quiet: no progress line, no input reminder; messages on stderr still appear")
    public static let progress = OptionSpec("progress", help: "show the progress line")
    public static let noProgress = OptionSpec("no-progress", help: "never show the progress line")
    /// For the tools whose requests are priced: each envelope's `cost`, and a spending cap.
    public static let cost = OptionSpec("cost", help: "add each outcome's estimated cost in dollars (\"cost\") to its envelope")
    public static let maxCost = OptionSpec("max-cost", value: "DOLLARS", decimals: 0...1_000_000_000,
                                           help: "spend at most DOLLARS in this run: what would cost more is not sent")

    /// `-j N`, with the tool's default in its help.
    public static func parallel(default value: Int) -> OptionSpec {
        OptionSpec("parallel", short: "j", value: "N", integers: 1...256, help: "at most N requests in flight (default \(value))")
    }

    /// `--api-base URL`, with the tool's service in its help.
    public static func apiBase(help: String) -> OptionSpec {
        OptionSpec("api-base", value: "URL", help: help)
    }

    /// The options of every tool that sends requests, in help order.
    public static func requestOptions(apiBaseHelp: String, parallelDefault: Int) -> [OptionSpec] {
        [
            parallel(default: parallelDefault), unordered, dryRun, timeout, retries, maxWait,
            apiBase(help: apiBaseHelp), cacert, credentials, profile, rawInput, maxLine, firstLine, verbose, quiet,
            progress, noProgress, help, version,
        ]
    }
}

/// The parsed command line.
public struct ParsedArguments {
    /// Values by long option name, in order given; a flag has one empty value per use.
    private var values: [String: [String]] = [:]
    /// Arguments that are not options.
    public internal(set) var positional: [String] = []
    /// The long names the tool declared.
    private let declared: Set<String>

    init(declared: Set<String>) {
        self.declared = declared
    }

    mutating func add(_ option: OptionSpec, _ value: String) {
        values[option.long, default: []].append(value)
    }

    /// Whether the flag was given; false for an option the tool does not have.
    public func isSet(_ option: OptionSpec) -> Bool {
        declared.contains(option.long) && values[option.long] != nil
    }

    /// The last value given for the option.
    public func value(_ option: OptionSpec) -> String? {
        declared.contains(option.long) ? values[option.long]?.last : nil
    }

    /// An integer option (already checked against its range by the parser), or `defaultValue`.
    public func integer(_ option: OptionSpec, default defaultValue: Int) -> Int {
        value(option).flatMap { Int($0) } ?? defaultValue
    }

    /// A decimal option (already checked against its range by the parser), or `defaultValue`.
    public func decimal(_ option: OptionSpec, default defaultValue: Double) -> Double {
        value(option).flatMap(ArgumentParser.decimal) ?? defaultValue
    }
}

/// GNU-style option parsing: `--opt=value`, `--opt value`, unique prefixes
/// of long names, `-x value`, `-xvalue`, bundled short flags, `--` ends options.
public struct ArgumentParser {
    public let tool: ToolDescription
    public let options: [OptionSpec]

    /// What the command line asks for.
    public enum Request {
        case run(ParsedArguments)
        /// `--help` or `--version`: this text on stdout, exit 0.
        case show(String)
    }

    public init(tool: ToolDescription, options: [OptionSpec]) {
        self.tool = tool
        self.options = options
    }

    /// Parses `arguments` (without the program name).
    public func parse(_ arguments: [String]) throws(StartupError) -> Request {
        var parsed = ParsedArguments(declared: Set(options.map(\.long)))
        var index = 0
        func takeValue(for spec: OptionSpec, inline: String?) throws(StartupError) -> String {
            if let inline { return inline }
            index += 1
            guard index < arguments.count else { throw .usage("option '--\(spec.long)' requires a value") }
            return arguments[index]
        }
        func record(_ spec: OptionSpec, _ value: String) throws(StartupError) {
            if !spec.choices.isEmpty && !spec.choices.contains(value) {
                throw .usage("--\(spec.long): '\(value)' is not one of \(spec.choices.joined(separator: ", "))")
            }
            if let range = spec.integers, !(Int(value).map(range.contains) ?? false) {
                throw .usage("--\(spec.long): expected an integer from \(range.lowerBound) to \(range.upperBound), got '\(value)'")
            }
            if let range = spec.decimals, !(Self.decimal(value).map(range.contains) ?? false) {
                throw .usage("--\(spec.long): expected a number from \(Self.describe(range.lowerBound)) to "
                             + "\(Self.describe(range.upperBound)), like 0.5 or 30, got '\(value)'")
            }
            parsed.add(spec, value)
        }
        while index < arguments.count {
            let argument = arguments[index]
            if argument == "--" {
                parsed.positional += arguments[(index + 1)...]
                break
            }
            if argument.hasPrefix("--") {
                let body = argument.dropFirst(2)
                let name: Substring
                let inline: String?
                if let equals = body.firstIndex(of: "=") {
                    name = body[..<equals]
                    inline = String(body[body.index(after: equals)...])
                } else {
                    name = body
                    inline = nil
                }
                let spec = try lookupLong(String(name))
                if spec.valueName == nil {
                    if inline != nil { throw .usage("option '--\(spec.long)' takes no value") }
                    try record(spec, "")
                } else {
                    try record(spec, takeValue(for: spec, inline: inline))
                }
            } else if argument.hasPrefix("-") && argument.count > 1 {
                var letters = Substring(argument.dropFirst())
                while let letter = letters.first {
                    letters = letters.dropFirst()
                    guard let spec = options.first(where: { $0.short == letter }) else {
                        throw .usage("unknown option '-\(letter)'")
                    }
                    if spec.valueName == nil {
                        try record(spec, "")
                    } else {
                        try record(spec, takeValue(for: spec, inline: letters.isEmpty ? nil : String(letters)))
                        break
                    }
                }
            } else {
                parsed.positional.append(argument)
            }
            index += 1
        }
        if parsed.isSet(CommonOptions.help) { return .show(helpText) }
        if parsed.isSet(CommonOptions.version) { return .show("\(tool.name) \(socialpipeVersion)\n") }
        // An interactive tool's arguments are its command, read where it
        // becomes the tool's own type (SocialpipeInteractive's `ToolMain.run`).
        if !tool.commands.isEmpty { return .run(parsed) }
        if tool.primaryField == nil {
            if parsed.isSet(CommonOptions.rawInput) { throw .usage("-R: \(tool.name) has no primary field; give JSON objects") }
            if let first = parsed.positional.first {
                throw .usage("unexpected argument '\(first)': \(tool.name) reads JSON records on stdin")
            }
        }
        return .run(parsed)
    }

    /// `value` as a plain decimal: digits with an optional fraction (`30`,
    /// `0.5`, `.25`); no sign, exponent, hexadecimal, `nan` or `inf`, which
    /// `Double(_:)` would take.
    static func decimal(_ value: String) -> Double? {
        var digits = 0
        var points = 0
        for byte in value.utf8 {
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"): digits += 1
            case UInt8(ascii: "."): points += 1
            default: return nil
            }
        }
        guard digits > 0, points <= 1 else { return nil }
        return Double(value)
    }

    /// `86400` rather than `86400.0` in a message.
    private static func describe(_ number: Double) -> String {
        number == number.rounded() && abs(number) < 1e15 ? String(Int(number)) : String(number)
    }

    private func lookupLong(_ name: String) throws(StartupError) -> OptionSpec {
        if let exact = options.first(where: { $0.long == name }) { return exact }
        let candidates = options.filter { $0.long.hasPrefix(name) }
        if candidates.count == 1, !name.isEmpty { return candidates[0] }
        if candidates.count > 1, !name.isEmpty {
            throw .usage("option '--\(name)' is ambiguous: " + candidates.map { "--" + $0.long }.joined(separator: ", "))
        }
        let suggestion = Spelling.nearest(to: name, among: options.map(\.long)).map { ": did you mean --\($0)?" } ?? ""
        throw .usage("unknown option '--\(name)'" + suggestion)
    }

    /// The `--help` text, generated from the option table.
    public var helpText: String {
        var text = "Usage: \(tool.name) \(tool.usage)\n\(tool.summary)\n\nOptions:\n"
        let labels = options.map { spec -> String in
            var label = spec.short.map { "  -\($0), " } ?? "      "
            label += "--" + spec.long
            if let value = spec.valueName { label += " " + value }
            return label
        }
        let width = (labels.map(\.count).max() ?? 0) + 2
        for (label, spec) in zip(labels, options) {
            text += label + String(repeating: " ", count: width - label.count) + spec.help + "\n"
        }
        if !tool.epilogue.isEmpty { text += "\n" + tool.epilogue + "\n" }
        return text
    }
}

/// The start of every tool's `main`: core dumps off, standard streams made
/// safe, the command line parsed, `--help` and `--version` answered, and a startup error
/// reported with its status. `body` builds the run and returns its status;
/// `main` passes the result to `exit`.
public enum ToolMain {
    public static func run(_ tool: ToolDescription, options: [OptionSpec],
                           _ body: (ParsedArguments) throws(StartupError) -> ExitStatus) -> ExitStatus {
        // Every tool comes to hold tokens and secrets: a crash must not leave
        // them in a core file (whatever `ulimit -c` says), nor may another
        // process of the user read them from memory.
        _ = sp_set_dumpable(0)
        StandardStreams.prepare()
        Diagnostics.toolName = tool.name
        let parser = ArgumentParser(tool: tool, options: options)
        do throws(StartupError) {
            switch try parser.parse(Array(CommandLine.arguments.dropFirst())) {
            case .show(let text):
                var text = text
                _ = text.withUTF8 { writeAll(fd: 1, $0) }
                return .success
            case .run(let arguments):
                return try body(arguments)
            }
        } catch {
            error.report()
            return error.status
        }
    }
}
