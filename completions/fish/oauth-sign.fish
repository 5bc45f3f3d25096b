# fish completion for oauth-sign(1), part of socialpipe

# Profile names of the credentials file in use (needs jq).
function __socialpipe_profiles
    set -l file
    set -l tokens (commandline -opc)
    for i in (seq (count $tokens))
        switch $tokens[$i]
            case --credentials
                set file $tokens[(math $i + 1)]
            case '--credentials=*'
                set file (string replace -- --credentials= '' $tokens[$i])
        end
    end
    test -n "$file"; or set file $SOCIALPIPE_CREDENTIALS
    if test -z "$file"
        set -q XDG_CONFIG_HOME[1]; and test -n "$XDG_CONFIG_HOME"
        and set file $XDG_CONFIG_HOME/socialpipe/credentials.json
        or set file $HOME/.config/socialpipe/credentials.json
    end
    set file (string replace -r '^~/' "$HOME/" -- $file)
    test -r "$file"; and command -q jq; or return 0
    jq -r '.profiles | keys[]' -- $file 2>/dev/null
end

complete -c oauth-sign -f
complete -c oauth-sign -l format -x -a 'json\t"the socialpipe envelope (default)" header\t"an Authorization header line" curl\t"a curl config block"' -d 'Output format'
complete -c oauth-sign -l rsa-key -rF -d 'PEM private key for RSA-SHA1 records'
complete -c oauth-sign -l credentials -rF -d 'Credentials file'
complete -c oauth-sign -l profile -x -a '(__socialpipe_profiles)' -d 'Profile in the credentials file'
complete -c oauth-sign -l max-line -x -d 'Longest accepted input line (bytes)'
complete -c oauth-sign -s h -l help -d 'Show the help and exit'
complete -c oauth-sign -l version -d 'Show the version and exit'
