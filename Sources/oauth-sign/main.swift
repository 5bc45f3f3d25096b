// oauth-sign: signs HTTP requests with OAuth 1.0a (RFC 5849), offline.
import Glibc
import Socialpipe
import SocialpipeX

let tool = ToolDescription(
    name: "oauth-sign",
    usage: "[OPTION]... < RECORDS",
    summary: """
    Sign HTTP requests with OAuth 1.0a (RFC 5849), offline. Each input line is a JSON
    record {method, url, params?, body?, content_type?, signature_method?, nonce?,
    timestamp?, callback?, verifier?, realm?, version?, body_hash?, consumer_key?,
    consumer_secret?, token?, token_secret?, private_key_file?, profile?}; each output
    line is its signed request.
    """,
    epilogue: """
    Formats: json writes {"ok","line","input","result":{method, url, base_string,
    signature, authorization, oauth}}; header writes one "Authorization: OAuth ..." line
    per record; curl writes a curl config block per record, so that
    `oauth-sign --format curl < requests | curl -K -` performs every request.
    Credentials not in the record come from TW_CONSUMER_KEY, TW_CONSUMER_SECRET,
    TW_ACCESS_TOKEN, TW_ACCESS_TOKEN_SECRET or the credentials file.
    Exit status: 0 every record signed, 1 some record failed, 2 usage error,
    3 configuration error, 129/130/143 interrupted, 141 output closed. See oauth-sign(1).
    """,
    primaryField: nil)

let formatOption = OptionSpec("format", value: "FORMAT", choices: ["json", "header", "curl"],
                              help: "json (the envelope, default), header or curl")
let rsaKeyOption = OptionSpec("rsa-key", value: "FILE", help: "PEM private key for RSA-SHA1 records")

let status = ToolMain.run(tool, options: [
    formatOption, rsaKeyOption,
    CommonOptions.credentials, CommonOptions.profile, CommonOptions.maxLine, CommonOptions.firstLine,
    CommonOptions.help, CommonOptions.version,
]) { arguments throws(StartupError) in
    let credentials = TwitterCredentialSource(try CredentialStore.load(arguments, fields: TwitterCredentials.fileFields,
                                                                      setUp: TwitterCredentials.setUp))
    var defaultKey: RSAPrivateKey?
    if let path = arguments.value(rsaKeyOption) {
        do throws(RSAPrivateKey.LoadError) {
            defaultKey = try RSAPrivateKey(path: path, rules: [.pipesAllowed])
        } catch {
            throw .configuration("--rsa-key: \(error.message)")
        }
    }
    let format = arguments.value(formatOption).flatMap(OutputFormat.init(rawValue:)) ?? .json
    let signer = RequestSigner(credentials: credentials, defaultKey: defaultKey, format: format)
    return try EventLoop(tool: tool, arguments: arguments, style: format == .json ? .envelopes : .toolLines).run(signer)
}
exit(status.rawValue)
