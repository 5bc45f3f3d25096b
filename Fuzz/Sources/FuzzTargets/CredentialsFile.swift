@testable import Socialpipe
@testable import SocialpipeX
@testable import SocialpipeGraph

/// The credentials file as the tools read it at start (`CredentialStore`
/// through `XSetup` and `GraphSetup`), then for each profile a record
/// names: any bytes in a private file either start the run or stop it with
/// a configuration error (exit 3), and a profile then either authorizes or
/// is an `auth` error; nothing traps.
///
/// Input: the file's bytes.
public enum CredentialsFile {
    nonisolated(unsafe) static let file = ScratchFile(mode: 0o600)
    static let tool = ToolDescription(name: "fuzz-credentials", usage: "", summary: "", epilogue: "", primaryField: "text")
    static let options = [CommonOptions.credentials, CommonOptions.profile, CommonOptions.dryRun]

    public static func run(_ data: UnsafeBufferPointer<UInt8>) {
        let bytes = Array(data)
        file.replace(with: bytes)
        guard case .run(let arguments)? = try? ArgumentParser(tool: tool, options: options).parse(["--credentials", file.path]) else {
            require(false, "the fuzz target's own arguments were refused")
            return
        }
        let profiles = profileNames(bytes)

        do throws(StartupError) {
            let x = try XSetup(arguments: arguments, tool: tool, dryRun: false)
            for name in profiles {
                do throws(RecordError) {
                    _ = try x.authorizer(for: record(profile: name))
                } catch {
                    require(error.kind == .auth, "profile \(escaped(Array(name.utf8))) fails X authorization with \(error.kind): \(error.message)")
                }
            }
        } catch {
            requireConfiguration(error, bytes)
        }
        do throws(StartupError) {
            let graph = try GraphSetup(arguments: arguments, tool: tool)
            for name in profiles {
                do throws(RecordError) {
                    _ = try graph.authorizer(for: record(profile: name))
                } catch {
                    require(error.kind == .auth, "profile \(escaped(Array(name.utf8))) fails Graph authorization with \(error.kind): \(error.message)")
                }
            }
        } catch {
            requireConfiguration(error, bytes)
        }
    }

    static func requireConfiguration(_ error: StartupError, _ bytes: [UInt8]) {
        guard case .configuration = error else {
            require(false, "a credentials file made a usage error: \(error) for \(escaped(bytes))")
            return
        }
    }

    static func record(profile: String) -> Record {
        let fields = JSON.object()
        fields.set(member: "profile", string: profile)
        return Record(line: 1, fields: fields)
    }

    /// The profiles the file names, as a record could name them.
    static func profileNames(_ bytes: [UInt8]) -> [String] {
        guard case .success(let document) = bytes.withUnsafeBufferPointer({ JSON.parse($0) }),
              let table = document["profiles"] else { return [] }
        return table.members.prefix(20).map(\.key)
    }
}
