// swift-tools-version:6.0
import PackageDescription

// One core module (Socialpipe) over three Debian C libraries, and one
// executable per command; X's post-length rules (TwitterText) stand apart,
// needing nothing. The two libraries are products so that the fuzz package
// (Fuzz/) can build on them. The C libraries are reached through system-library
// targets; CCurl's shim.h carries typed wrappers for curl's variadic calls,
// CLinux's for the Linux calls glibc wraps in none (openat2) or a variadic one.
// The tools are single-threaded; dynamic exclusivity checks on class
// properties cost more than the signing they guard.
let fastSettings: [SwiftSetting] = [.unsafeFlags(["-enforce-exclusivity=unchecked"], .when(configuration: .release))]

let package = Package(
    name: "socialpipe",
    products: [
        .library(name: "Socialpipe", targets: ["Socialpipe"]),
        .library(name: "TwitterText", targets: ["TwitterText"]),
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
        .systemLibrary(name: "COpenSSL", pkgConfig: "openssl",
                       providers: [.apt(["libssl-dev"])]),
        .systemLibrary(name: "CJansson", pkgConfig: "jansson",
                       providers: [.apt(["libjansson-dev"])]),
        // Linux calls glibc has no typed wrapper for (openat2, prctl).
        .systemLibrary(name: "CLinux"),
        .target(name: "Socialpipe", dependencies: ["CCurl", "COpenSSL", "CJansson", "CLinux"], swiftSettings: fastSettings),
        .executableTarget(name: "oauth-sign", dependencies: ["Socialpipe"], swiftSettings: fastSettings),
        .target(name: "TwitterText", swiftSettings: fastSettings),
        .executableTarget(name: "tw-post", dependencies: ["Socialpipe", "TwitterText"], swiftSettings: fastSettings,
                          linkerSettings: [.linkedLibrary("curl")]),
        .executableTarget(name: "tw-friends", dependencies: ["Socialpipe"], swiftSettings: fastSettings,
                          linkerSettings: [.linkedLibrary("curl")]),
        .executableTarget(name: "fb-feed", dependencies: ["Socialpipe"], swiftSettings: fastSettings,
                          linkerSettings: [.linkedLibrary("curl")]),
        .executableTarget(name: "fb-perm-check", dependencies: ["Socialpipe"], swiftSettings: fastSettings,
                          linkerSettings: [.linkedLibrary("curl")]),
        .executableTarget(name: "tw-auth", dependencies: ["Socialpipe"], swiftSettings: fastSettings,
                          linkerSettings: [.linkedLibrary("curl")]),
        .executableTarget(name: "fb-auth", dependencies: ["Socialpipe"], swiftSettings: fastSettings,
                          linkerSettings: [.linkedLibrary("curl")]),
        .testTarget(name: "SocialpipeTests", dependencies: ["Socialpipe"]),
    ]
)
