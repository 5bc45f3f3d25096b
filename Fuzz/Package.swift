// swift-tools-version:6.0
import PackageDescription

// libFuzzer targets for the code that reads bytes from outside (`make fuzz`),
// one executable each over the checks in FuzzTargets. A package of its own,
// so that `swift build` and `make` of the tools never see it. It is built
// only as the Makefile builds it: SwiftPM's `--sanitize=fuzzer` compiles
// each executable as a library, without the `main` SwiftPM would generate,
// and links libFuzzer, whose `main` drives the `LLVMFuzzerTestOneInput`
// each target exports; `-Xswiftc -sanitize=fuzzer,address` gives every
// module (the core's too) coverage and AddressSanitizer, since SwiftPM
// hands the compiler only one of several `--sanitize`; `-enable-testing`
// lets the targets `@testable import` the core, whose readers (the loop's
// `RecordInput`, `Redaction`'s key test) are internal.
let targets = ["lines", "records", "recordtext", "redaction", "rawjson", "percent", "url", "batch",
               "tweetlength", "mediakind", "credentials", "headers"]

let package = Package(
    name: "socialpipe-fuzz",
    dependencies: [.package(name: "socialpipe", path: "..")],
    targets: [
        .target(name: "FuzzTargets", dependencies: [
            .product(name: "Socialpipe", package: "socialpipe"),
            .product(name: "SocialpipeX", package: "socialpipe"),
            .product(name: "SocialpipeGraph", package: "socialpipe"),
            .product(name: "TwPostMedia", package: "socialpipe"),
            .product(name: "TwitterText", package: "socialpipe"),
        ], linkerSettings: [.linkedLibrary("crypto")]),
    ] + targets.map { name in
        .executableTarget(name: "fuzz-\(name)", dependencies: ["FuzzTargets"], path: "Sources/fuzz-\(name)")
    }
)
