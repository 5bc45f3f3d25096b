/// How oauth-sign writes each signed request: the envelope, one
/// `Authorization:` header line, or a curl config block.
enum OutputFormat: String {
    case json, header, curl
}

/// `--format curl`: one curl config block per record, separated by `next`,
/// so that `oauth-sign --format curl | curl -K -` performs every request.
final class CurlConfig {
    private var blocks = 0

    /// A curl config quoted string: `\` and `"` escaped, controls as `\n`, `\r`, `\t`, `\v`.
    static func quoted<Bytes: Sequence>(_ bytes: Bytes) -> String where Bytes.Element == UInt8 {
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
        return String(decoding: output, as: UTF8.self)
    }

    /// The block for `request` (without its last newline).
    func block(for request: SignedRequest, line: Int) -> String {
        var lines: [String] = []
        func option(_ name: String, _ value: [UInt8]) { lines.append(name + " = " + Self.quoted(value)) }
        if blocks > 0 { lines.append("next") }
        blocks += 1
        lines.append("# line \(line)")
        option("url", Array(request.url.utf8))
        if request.method == "HEAD" {
            lines.append("head")
        } else if request.method != "GET" || request.body != nil {
            option("request", Array(request.method.utf8))
        }
        option("header", Array(("Authorization: " + request.authorization).utf8))
        if let body = request.body {
            if let contentType = request.contentType { option("header", Array(("Content-Type: " + contentType).utf8)) }
            option("data-raw", body)
        }
        return lines.joined(separator: "\n")
    }
}
