# The command typed so far on the command line of an interactive socialpipe(7)
# tool (tw-auth, fb-auth): the first word that is neither an option nor the
# value of one. The arguments name the options that take a separate value
# (--profile NAME). Prints it and succeeds; fails when there is none yet.
# fish autoloads it from $fish_function_path; `make install` puts it in
# vendor_functions.d.
function __socialpipe_command
    set -l tokens (commandline -opc)
    set -e tokens[1]
    set -l skip 0
    for token in $tokens
        if test $skip = 1
            set skip 0
            continue
        end
        if contains -- $token $argv
            set skip 1
            continue
        end
        switch $token
            case '-*'
                continue
        end
        echo $token
        return 0
    end
    return 1
end
