import Socialpipe

/// Failures in the text formats go to stderr as `oauth-sign: line N: KIND: MESSAGE`.
private func reportFailure(_ outcome: Outcome) -> Bool {
    guard case .failure(let error) = outcome.result else { return false }
    Diagnostics.say("line \(outcome.line): \(error.kind.rawValue): \(error.message)")
    return true
}

/// `--format header`: one `Authorization: OAuth …` line per record.
final class HeaderFormat: OutcomeFormat {
    func write(_ outcome: Outcome, to output: OutputWriter) {
        guard !reportFailure(outcome), let request = outcome.attachment as? SignedRequest else { return }
        output.write("Authorization: " + request.authorization + "\n")
    }
}

/// `--format curl`: one curl config block per record, separated by `next`,
/// so that `oauth-sign --format curl | curl -K -` performs every request.
final class CurlConfigFormat: OutcomeFormat {
    private var blocks = 0

    /// A curl config quoted string: `\` and `"` escaped, controls as `\n`, `\r`, `\t`, `\v`.
    static func quoted<Bytes: Sequence>(_ bytes: Bytes) -> [UInt8] where Bytes.Element == UInt8 {
        var output: [UInt8] = [0x22]
        for byte in bytes {
            switch byte {
            case 0x22, 0x5C: output += [0x5C, byte]
            case 0x0A: output += [0x5C, UInt8(ascii: "n")]
            case 0x0D: output += [0x5C, UInt8(ascii: "r")]
            case 0x09: output += [0x5C, UInt8(ascii: "t")]
            case 0x0B: output += [0x5C, UInt8(ascii: "v")]
            default: output.append(byte)
            }
        }
        output.append(0x22)
        return output
    }

    func write(_ outcome: Outcome, to output: OutputWriter) {
        guard !reportFailure(outcome), let request = outcome.attachment as? SignedRequest else { return }
        var block: [UInt8] = []
        func option(_ name: String, _ value: [UInt8]) {
            block += Array(name.utf8) + Array(" = ".utf8) + Self.quoted(value) + [0x0A]
        }
        if blocks > 0 { block += Array("next\n".utf8) }
        blocks += 1
        block += Array("# line \(outcome.line)\n".utf8)
        option("url", Array(request.url.utf8))
        if request.method == "HEAD" {
            block += Array("head\n".utf8)
        } else if request.method != "GET" || request.body != nil {
            option("request", Array(request.method.utf8))
        }
        option("header", Array(("Authorization: " + request.authorization).utf8))
        if let body = request.body {
            if let contentType = request.contentType { option("header", Array(("Content-Type: " + contentType).utf8)) }
            option("data-raw", body)
        }
        output.write(block)
    }
}
