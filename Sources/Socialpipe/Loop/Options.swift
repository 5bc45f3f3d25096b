import Glibc

/// One command-line option.
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
    public let help: String

    public init(_ long: String, short: Character? = nil, value: String? = nil, choices: [String] = [],
                integers: ClosedRange<Int>? = nil, help: String) {
        self.long = long
        self.short = short
        self.valueName = value
        self.choices = choices
        self.integers = integers
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

    public init(name: String, usage: String, summary: String, epilogue: String, primaryField: String?) {
        self.name = name
        self.usage = usage
        self.summary = summary
        self.epilogue = epilogue
        self.primaryField = primaryField
    }
}

/// The options of every tool that sends requests, in help order.
public func requestOptions(apiBaseHelp: String, parallelDefault: Int) -> [OptionSpec] {
    [
        OptionSpec("parallel", short: "j", value: "N", integers: 1...256,
                   help: "at most N requests in flight (default \(parallelDefault))"),
        CommonOptions.unordered, CommonOptions.dryRun, CommonOptions.timeout, CommonOptions.retries,
        CommonOptions.maxWait,
        OptionSpec("api-base", value: "URL", help: apiBaseHelp),
        CommonOptions.cacert, CommonOptions.credentials, CommonOptions.profile, CommonOptions.rawInput,
        CommonOptions.maxLine, CommonOptions.verbose, CommonOptions.quiet, CommonOptions.progress,
        CommonOptions.noProgress, CommonOptions.help, CommonOptions.version,
    ]
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
    public static let rawInput = OptionSpec("raw-input", short: "R",
        help: "each input line, as text, is the record's primary field")
    public static let unordered = OptionSpec("unordered", help: "write outcomes as they complete")
    public static let dryRun = OptionSpec("dry-run", help: "build and sign each request, send nothing")
    public static let timeout = OptionSpec("timeout", value: "S", integers: 1...86_400, help: "per-request timeout in seconds (default 30)")
    public static let retries = OptionSpec("retries", value: "N", integers: 0...100, help: "retries for retryable failures (default 3)")
    public static let maxWait = OptionSpec("max-wait", value: "S", integers: 0...(86_400 * 7),
        help: "longest rate-limit wait before a record fails (default 900)")
    public static let cacert = OptionSpec("cacert", value: "FILE", help: "trust this CA bundle")
    public static let verbose = OptionSpec("verbose", short: "v", help: "log each request and response status on stderr")
    public static let quiet = OptionSpec("quiet", short: "q", help: "no progress line")
    public static let progress = OptionSpec("progress", help: "show the progress line")
    public static let noProgress = OptionSpec("no-progress", help: "never show the progress line")
}

/// The parsed command line.
public struct ParsedArguments {
    /// Values by long option name, in order given; a flag has one empty value per use.
    public var values: [String: [String]] = [:]
    /// Arguments that are not options.
    public var positional: [String] = []
    let tool: ToolDescription

    /// Whether the flag was given.
    public func flag(_ long: String) -> Bool { values[long] != nil }

    /// The last value given for the option.
    public func value(_ long: String) -> String? { values[long]?.last }

    /// An integer option, already checked against its spec's range by the parser.
    public func integer(_ long: String, default defaultValue: Int) -> Int {
        value(long).flatMap { Int($0) } ?? defaultValue
    }
}

/// GNU-style option parsing: `--opt=value`, `--opt value`, unique prefixes
/// of long names, `-x value`, `-xvalue`, bundled short flags, `--` ends options.
public struct ArgumentParser {
    public let tool: ToolDescription
    public let options: [OptionSpec]

    public init(tool: ToolDescription, options: [OptionSpec]) {
        self.tool = tool
        self.options = options
        Diagnostics.toolName = tool.name
    }

    /// Parses `arguments` (without the program name). Prints help or the
    /// version and exits 0 when asked; exits 2 on a usage error.
    public func parse(_ arguments: [String]) -> ParsedArguments {
        var parsed = ParsedArguments(tool: tool)
        var index = 0
        func takeValue(for spec: OptionSpec, inline: String?) -> String {
            if let inline { return inline }
            index += 1
            guard index < arguments.count else {
                Diagnostics.usageError("option '--\(spec.long)' requires a value")
            }
            return arguments[index]
        }
        func record(_ spec: OptionSpec, _ value: String) {
            if !spec.choices.isEmpty && !spec.choices.contains(value) {
                Diagnostics.usageError("--\(spec.long): '\(value)' is not one of \(spec.choices.joined(separator: ", "))")
            }
            if let range = spec.integers, !(Int(value).map(range.contains) ?? false) {
                Diagnostics.usageError("--\(spec.long): expected an integer from \(range.lowerBound) to \(range.upperBound), got '\(value)'")
            }
            parsed.values[spec.long, default: []].append(value)
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
                let spec = lookupLong(String(name))
                if spec.valueName == nil {
                    if inline != nil { Diagnostics.usageError("option '--\(spec.long)' takes no value") }
                    record(spec, "")
                } else {
                    record(spec, takeValue(for: spec, inline: inline))
                }
            } else if argument.hasPrefix("-") && argument.count > 1 {
                var letters = Substring(argument.dropFirst())
                while let letter = letters.first {
                    letters = letters.dropFirst()
                    guard let spec = options.first(where: { $0.short == letter }) else {
                        Diagnostics.usageError("unknown option '-\(letter)'")
                    }
                    if spec.valueName == nil {
                        record(spec, "")
                    } else {
                        record(spec, takeValue(for: spec, inline: letters.isEmpty ? nil : String(letters)))
                        break
                    }
                }
            } else {
                parsed.positional.append(argument)
            }
            index += 1
        }
        if parsed.flag("help") {
            let output = OutputWriter()
            output.write(helpText)
            output.flush()
            exit(0)
        }
        if parsed.flag("version") {
            let output = OutputWriter()
            output.write("\(tool.name) \(socialpipeVersion)\n")
            output.flush()
            exit(0)
        }
        if tool.primaryField == nil {
            if parsed.flag("raw-input") { Diagnostics.usageError("-R: \(tool.name) has no primary field; give JSON objects") }
            if let first = parsed.positional.first {
                Diagnostics.usageError("unexpected argument '\(first)': \(tool.name) reads JSON records on stdin")
            }
        }
        return parsed
    }

    private func lookupLong(_ name: String) -> OptionSpec {
        if let exact = options.first(where: { $0.long == name }) { return exact }
        let candidates = options.filter { $0.long.hasPrefix(name) }
        if candidates.count == 1, !name.isEmpty { return candidates[0] }
        if candidates.count > 1, !name.isEmpty {
            Diagnostics.usageError("option '--\(name)' is ambiguous: " + candidates.map { "--" + $0.long }.joined(separator: ", "))
        }
        Diagnostics.usageError("unknown option '--\(name)'")
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
