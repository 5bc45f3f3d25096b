# Profile names of the credentials file in use (needs jq), for the fish
# completions of socialpipe(7)'s tools. fish autoloads it from
# $fish_function_path; `make install` puts it in vendor_functions.d.
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
