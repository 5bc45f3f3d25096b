# fish completion for fb-auth(1), part of socialpipe

# --profile: __socialpipe_profiles; the command typed: __socialpipe_command;
# both autoloaded from functions/ (installed in vendor_functions.d).

# The options that take a separate value, which __socialpipe_command skips.
set -l valued --scopes --store --graph-version --profile --credentials --api-base --cacert --timeout
set -l none "not __socialpipe_command $valued"

complete -c fb-auth -f
complete -c fb-auth -n $none -a device -d 'Login for Devices, then a long-lived user token'
complete -c fb-auth -n $none -a exchange -d 'A short-lived user token for a long-lived one'
complete -c fb-auth -n $none -a pages -d "The Pages the user manages; --store keeps a Page's token"
complete -c fb-auth -n $none -a status -d 'Whether the token is valid, its type, expiry and scopes'
complete -c fb-auth -n $none -a logout -d 'Revoke the app permissions and remove the tokens'

complete -c fb-auth -n "$none; or contains -- (__socialpipe_command $valued) device" \
    -l scopes -x -d 'device: permissions to ask for, separated by commas'
complete -c fb-auth -n "$none; or contains -- (__socialpipe_command $valued) pages" \
    -l store -x -d "pages: store this Page's token as the profile's token"
complete -c fb-auth -n "$none; or contains -- (__socialpipe_command $valued) status" \
    -l all -d 'status: check every profile of the file'

# The Graph API versions Meta serves (November 2026), latest first.
complete -c fb-auth -l graph-version -x -k -a 'v27.0\t"latest (default)" v26.0 v25.0 v24.0 v23.0 v22.0 v21.0' -d 'Graph API version'
complete -c fb-auth -l profile -x -a '(__socialpipe_profiles)' -d 'Profile in the credentials file'
complete -c fb-auth -l credentials -rF -d 'Credentials file'
complete -c fb-auth -l api-base -x -d 'Graph API base URL'
complete -c fb-auth -l cacert -rF -d 'CA bundle to trust'
complete -c fb-auth -l timeout -x -d 'Per-request timeout in seconds (default 30)'
complete -c fb-auth -s v -l verbose -d 'Log each request on stderr'
complete -c fb-auth -s h -l help -d 'Show the help and exit'
complete -c fb-auth -l version -d 'Show the version and exit'
