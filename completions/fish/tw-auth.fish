# fish completion for tw-auth(1), part of socialpipe

# --profile: __socialpipe_profiles; the command typed: __socialpipe_command;
# both autoloaded from functions/ (installed in vendor_functions.d).

# The options that take a separate value, which __socialpipe_command skips.
set -l valued --access --scopes --client-id --redirect-uri --profile --credentials --api-base --cacert --timeout
set -l none "not __socialpipe_command $valued"

complete -c tw-auth -f
complete -c tw-auth -n $none -a pin -d 'OAuth 1.0a with a PIN'
complete -c tw-auth -n $none -a oauth2 -d 'OAuth 2.0 with PKCE'
complete -c tw-auth -n $none -a app -d 'An app-only bearer token'
complete -c tw-auth -n $none -a status -d 'Whether the credentials work, and as whom'
complete -c tw-auth -n $none -a logout -d 'Revoke the X tokens and remove them'

complete -c tw-auth -n "$none; or contains -- (__socialpipe_command $valued) pin" \
    -l access -x -a 'read\t"Read only" write\t"Read and write"' -d 'pin: ask for read or write access'
complete -c tw-auth -n "$none; or contains -- (__socialpipe_command $valued) oauth2" \
    -l scopes -x -d 'oauth2: scopes, space-separated'
complete -c tw-auth -n "$none; or contains -- (__socialpipe_command $valued) oauth2" \
    -l client-id -x -d "oauth2: the app's OAuth 2.0 client ID"
complete -c tw-auth -n "$none; or contains -- (__socialpipe_command $valued) oauth2" \
    -l redirect-uri -x -d 'oauth2: the redirect URI registered for the app'
complete -c tw-auth -n "$none; or contains -- (__socialpipe_command $valued) oauth2" \
    -l no-browser -d 'oauth2: paste the redirected address instead of listening'
complete -c tw-auth -n "$none; or contains -- (__socialpipe_command $valued) status" \
    -l all -d 'status: check every profile of the file'

complete -c tw-auth -l profile -x -a '(__socialpipe_profiles)' -d 'Profile in the credentials file'
complete -c tw-auth -l credentials -rF -d 'Credentials file'
complete -c tw-auth -l api-base -x -d 'X API base URL'
complete -c tw-auth -l cacert -rF -d 'CA bundle to trust'
complete -c tw-auth -l timeout -x -d 'Per-request timeout in seconds (default 30)'
complete -c tw-auth -s v -l verbose -d 'Log each request on stderr'
complete -c tw-auth -s h -l help -d 'Show the help and exit'
complete -c tw-auth -l version -d 'Show the version and exit'
