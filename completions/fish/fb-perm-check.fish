# fish completion for fb-perm-check(1), part of socialpipe

# --profile: __socialpipe_profiles, autoloaded from functions/__socialpipe_profiles.fish
# (installed in vendor_functions.d).

complete -c fb-perm-check -f
# The permissions the tool knows, asked of it: the list is kept there only.
complete -c fb-perm-check -k -a '(fb-perm-check --list-permissions 2>/dev/null)' -d Permission
# The Graph API versions Meta serves (November 2026), latest first.
complete -c fb-perm-check -l graph-version -x -k -a 'v27.0\t"latest (default)" v26.0 v25.0 v24.0 v23.0 v22.0 v21.0' -d 'Graph API version'
complete -c fb-perm-check -l token -d 'Also inspect the token with debug_token (needs the app id and secret)'
complete -c fb-perm-check -l list-permissions -d 'Print the known Graph permission names and exit'
complete -c fb-perm-check -s j -l parallel -x -d 'At most N requests in flight (default 4)'
complete -c fb-perm-check -l unordered -d 'Write outcomes as they complete'
complete -c fb-perm-check -l dry-run -d 'Build and sign each request, send nothing'
complete -c fb-perm-check -l timeout -x -d 'Per-request timeout in seconds (default 30)'
complete -c fb-perm-check -l retries -x -d 'Retries for retryable failures (default 3)'
complete -c fb-perm-check -l max-wait -x -d 'Longest rate-limit wait in seconds (default 900)'
complete -c fb-perm-check -l api-base -x -d 'Base URL of the Graph API'
complete -c fb-perm-check -l cacert -rF -d 'CA bundle to trust'
complete -c fb-perm-check -l credentials -rF -d 'Credentials file'
complete -c fb-perm-check -l profile -x -a '(__socialpipe_profiles)' -d 'Profile in the credentials file'
complete -c fb-perm-check -s R -l raw-input -d 'Each input line is a permission name'
complete -c fb-perm-check -l max-line -x -d 'Longest accepted input line (bytes)'
complete -c fb-perm-check -l first-line -x -d 'Number of the first input line'
complete -c fb-perm-check -s v -l verbose -d 'Log each request on stderr'
complete -c fb-perm-check -s q -l quiet -d 'Quiet: nothing on stdout, the exit status answers'
complete -c fb-perm-check -l progress -d 'Show the progress line'
complete -c fb-perm-check -l no-progress -d 'Never show the progress line'
complete -c fb-perm-check -s h -l help -d 'Show the help and exit'
complete -c fb-perm-check -l version -d 'Show the version and exit'
