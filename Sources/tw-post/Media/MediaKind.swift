import Socialpipe
/// What a picture or video file is, told by its first bytes (never by its
/// name): the formats X takes.
public enum MediaKind: Sendable, Equatable {
    case jpeg, png, gif, webp, mp4, quicktime

    /// The MIME type.
    public var mimeType: String {
        switch self {
        case .jpeg: return "image/jpeg"
        case .png: return "image/png"
        case .gif: return "image/gif"
        case .webp: return "image/webp"
        case .mp4: return "video/mp4"
        case .quicktime: return "video/quicktime"
        }
    }

    /// How many leading bytes `sniff` looks at.
    public static let headLength = 16

    /// The kind the file starting with `head` is, if it is one of these.
    public static func sniff(_ head: [UInt8]) -> MediaKind? {
        func starts(_ prefix: [UInt8], at offset: Int = 0) -> Bool {
            head.count >= offset + prefix.count && Array(head[offset..<(offset + prefix.count)]) == prefix
        }
        if starts([0xFF, 0xD8, 0xFF]) { return .jpeg }
        if starts([0x89, 0x50, 0x4E, 0x47, 0x0D, 0x0A, 0x1A, 0x0A]) { return .png }
        if starts(Array("GIF87a".utf8)) || starts(Array("GIF89a".utf8)) { return .gif }
        if starts(Array("RIFF".utf8)) && starts(Array("WEBP".utf8), at: 8) { return .webp }
        // ISO base media files (MP4, and QuickTime's own brand) open with an
        // `ftyp` box; older QuickTime files open with a movie's other boxes.
        if starts(Array("ftyp".utf8), at: 4) { return starts(Array("qt  ".utf8), at: 8) ? .quicktime : .mp4 }
        // (A `wide` box is 8 bytes; a first `moov` or `mdat` under 16 MiB,
        // which keeps text that happens to hold the word from passing.)
        let boxSize = head.count >= 4 ? head[0..<4].reduce(0) { $0 << 8 | Int($1) } : 0
        if boxSize == 8 && starts(Array("wide".utf8), at: 4) { return .quicktime }
        if (8..<(1 << 24)).contains(boxSize) && (starts(Array("moov".utf8), at: 4) || starts(Array("mdat".utf8), at: 4)) {
            return .quicktime
        }
        return nil
    }
}
