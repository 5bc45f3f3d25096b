@testable import Socialpipe
@testable import TwPostMedia

/// The media-kind sniffer (`MediaKind.sniff`): it looks at the first 16
/// bytes only, and names a kind only when those bytes carry that kind's
/// signature.
public enum Media {
    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        let head = Array(data)
        let kind = MediaKind.sniff(head)
        require(kind == MediaKind.sniff(Array(head.prefix(MediaKind.headLength))),
                "sniff looks past the first \(MediaKind.headLength) bytes: \(escaped(head))")
        guard let kind else { return }
        func has(_ signature: String, at offset: Int = 0) -> Bool {
            head.dropFirst(offset).starts(with: Array(signature.utf8))
        }
        let carriesSignature: Bool
        switch kind {
        case .jpeg: carriesSignature = head.starts(with: [0xFF, 0xD8, 0xFF])
        case .png: carriesSignature = head.starts(with: [0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A])
        case .gif: carriesSignature = has("GIF87a") || has("GIF89a")
        case .webp: carriesSignature = has("RIFF") && has("WEBP", at: 8)
        case .mp4: carriesSignature = has("ftyp", at: 4) && !has("qt  ", at: 8)
        case .quicktime: carriesSignature = has("ftypqt  ", at: 4) || has("wide", at: 4) || has("moov", at: 4) || has("mdat", at: 4)
        }
        require(carriesSignature, "sniffed as \(kind.mimeType) without its signature: \(escaped(head))")
    }
}
