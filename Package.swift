// swift-tools-version:6.0
import PackageDescription

// The layers, from the bottom: the C libraries; the core every tool shares
// (Socialpipe: loop, records, engine, OAuth 1.0a signing, JSON, credentials
// file), which names no service; one module per service (SocialpipeX,
// SocialpipeGraph) shared by that service's tools; what only the two
// interactive tools share (SocialpipeInteractive); and one executable per
// command, holding what only it uses. X's post-length rules (TwitterText)
// stand apart, needing nothing. The libraries are products so that the fuzz
// package (Fuzz/) can build on them. The C libraries are reached through system-library
// targets; CCurl's shim.h carries typed wrappers for curl's variadic calls,
// CLinux's for the Linux calls Swift cannot reach through Glibc: openat2 (no
// wrapper), getrandom (its header clashes with CCurl's module) and variadic ones,
// and the byte scans of JSON text in SSE2 (sixteen bytes to a compare).
// The tools are single-threaded; dynamic exclusivity checks on class
// properties cost more than the signing they guard. Cross-module optimisation
// lets a tool's loop over a page's thousand accounts inline the core's small
// generic readers instead of calling them unspecialised.
let fastSettings: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked", "-cross-module-optimization"], .when(configuration: .release))]
// libcrypto is linked by each executable (and test or fuzz target) rather
// than by COpenSSL, so that oauth-sign alone can take it statically: loading
// and relocating libcrypto.so (bound at load, some 3,400 symbols) was most of
// oauth-sign's start-up. The tools that transfer load it with libcurl anyway.
let sharedCrypto: [LinkerSetting] = [.linkedLibrary("crypto")]
let staticCrypto: [LinkerSetting] = [.unsafeFlags(["-Xlinker", "-Bstatic", "-Xlinker", "-lcrypto", "-Xlinker", "-Bdynamic"])]

let package = Package(
    name: "socialpipe",
    products: [
        .library(name: "Socialpipe", targets: ["Socialpipe"]),
        .library(name: "SocialpipeX", targets: ["SocialpipeX"]),
        .library(name: "SocialpipeGraph", targets: ["SocialpipeGraph"]),
        .library(name: "TwitterText", targets: ["TwitterText"]),
        .library(name: "TwPostMedia", targets: ["TwPostMedia"]),
        .executable(name: "oauth-sign", targets: ["oauth-sign"]),
        .executable(name: "tw-post", targets: ["tw-post"]),
        .executable(name: "tw-friends", targets: ["tw-friends"]),
        .executable(name: "fb-feed", targets: ["fb-feed"]),
        .executable(name: "fb-perm-check", targets: ["fb-perm-check"]),
        .executable(name: "tw-auth", targets: ["tw-auth"]),
        .executable(name: "fb-auth", targets: ["fb-auth"]),
    ],
    targets: [
        // libcurl is linked by the tools that transfer (see CCurl/shim.h), not
        // through pkg-config, which would hand it to every executable.
        .systemLibrary(name: "CCurl", providers: [.apt(["libcurl4-openssl-dev"])]),
        .systemLibrary(name: "COpenSSL", providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CJansson", pkgConfig: "jansson",
                       providers: [.apt(["libjansson-dev"])]),
        // Linux calls glibc has no typed wrapper for (openat2, prctl), and SSE2 byte scans.
        .systemLibrary(name: "CLinux"),
        .target(name: "Socialpipe", dependencies: ["CCurl", "COpenSSL", "CJansson", "CLinux"], swiftSettings: fastSettings),
        .target(name: "SocialpipeX", dependencies: ["Socialpipe"], swiftSettings: fastSettings),
        .target(name: "SocialpipeGraph", dependencies: ["Socialpipe"], swiftSettings: fastSettings),
        .target(name: "SocialpipeInteractive", dependencies: ["Socialpipe"], swiftSettings: fastSettings),
        .executableTarget(name: "oauth-sign", dependencies: ["SocialpipeX", "COpenSSL"], swiftSettings: fastSettings,
                          linkerSettings: staticCrypto),
        .target(name: "TwitterText", swiftSettings: fastSettings),
        // tw-post's files: opened only inside the media directory, told by
        // their bytes. A module of the tool's own so that its unit tests (and
        // the fuzz package) reach it without linking libcurl.
        .target(name: "TwPostMedia", dependencies: ["Socialpipe", "CLinux"], path: "Sources/tw-post/Media", swiftSettings: fastSettings),
        .executableTarget(name: "tw-post", dependencies: ["SocialpipeX", "TwitterText", "TwPostMedia"], exclude: ["Media"],
                          swiftSettings: fastSettings,
                          linkerSettings: sharedCrypto + [.linkedLibrary("curl")]),
        .executableTarget(name: "tw-friends", dependencies: ["SocialpipeX"], swiftSettings: fastSettings,
                          linkerSettings: sharedCrypto + [.linkedLibrary("curl")]),
        .executableTarget(name: "fb-feed", dependencies: ["SocialpipeGraph"], swiftSettings: fastSettings,
                          linkerSettings: sharedCrypto + [.linkedLibrary("curl")]),
        .executableTarget(name: "fb-perm-check", dependencies: ["SocialpipeGraph"], swiftSettings: fastSettings,
                          linkerSettings: sharedCrypto + [.linkedLibrary("curl")]),
        .executableTarget(name: "tw-auth", dependencies: ["SocialpipeX", "SocialpipeInteractive"], swiftSettings: fastSettings,
                          linkerSettings: sharedCrypto + [.linkedLibrary("curl")]),
        .executableTarget(name: "fb-auth", dependencies: ["SocialpipeGraph", "SocialpipeInteractive"], swiftSettings: fastSettings,
                          linkerSettings: sharedCrypto + [.linkedLibrary("curl")]),
        // Tests: one target per layer, over helpers they share.
        .target(name: "TestSupport", dependencies: ["Socialpipe"], path: "Tests/TestSupport", linkerSettings: sharedCrypto),
        .testTarget(name: "SocialpipeTests", dependencies: ["Socialpipe", "TestSupport"]),
        .testTarget(name: "SocialpipeXTests", dependencies: ["SocialpipeX", "TestSupport"]),
        .testTarget(name: "SocialpipeGraphTests", dependencies: ["SocialpipeGraph", "TestSupport"]),
        .testTarget(name: "TwPostTests", dependencies: ["TwPostMedia", "TwitterText", "TestSupport"]),
        .testTarget(name: "SocialpipeInteractiveTests", dependencies: ["SocialpipeInteractive", "TestSupport"]),
    ]
)
