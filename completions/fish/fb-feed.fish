# fish completion for fb-feed(1), part of socialpipe

# --profile: __socialpipe_profiles, autoloaded from functions/__socialpipe_profiles.fish
# (installed in vendor_functions.d).

complete -c fb-feed -f
# The Graph API versions Meta serves (November 2026), latest first.
complete -c fb-feed -l graph-version -x -k -a 'v27.0\t"latest (default)" v26.0 v25.0 v24.0 v23.0 v22.0 v21.0' -d 'Graph API version'
complete -c fb-feed -l batch -x -d 'Send up to N posts in one batch request (2-50)'
complete -c fb-feed -l allow-legacy-fields -d 'Send picture, name, caption, description and app_id anyway'
complete -c fb-feed -s j -l parallel -x -d 'At most N requests in flight (default 1)'
complete -c fb-feed -l unordered -d 'Write outcomes as they complete'
complete -c fb-feed -l dry-run -d 'Build and sign each request, send nothing'
complete -c fb-feed -l timeout -x -d 'Per-request timeout in seconds (default 30)'
complete -c fb-feed -l retries -x -d 'Retries for retryable failures (default 3)'
complete -c fb-feed -l max-wait -x -d 'Longest rate-limit wait in seconds (default 900)'
complete -c fb-feed -l api-base -x -d 'Base URL of the Graph API'
complete -c fb-feed -l cacert -rF -d 'CA bundle to trust'
complete -c fb-feed -l credentials -rF -d 'Credentials file'
complete -c fb-feed -l profile -x -a '(__socialpipe_profiles)' -d 'Profile in the credentials file'
complete -c fb-feed -s R -l raw-input -d 'Each input line is the message of a post'
complete -c fb-feed -l max-line -x -d 'Longest accepted input line (bytes)'
complete -c fb-feed -l first-line -x -d 'Number of the first input line'
complete -c fb-feed -s v -l verbose -d 'Log each request on stderr'
complete -c fb-feed -s q -l quiet -d 'Quiet: no progress line or input reminder'
complete -c fb-feed -l progress -d 'Show the progress line'
complete -c fb-feed -l no-progress -d 'Never show the progress line'
complete -c fb-feed -s h -l help -d 'Show the help and exit'
complete -c fb-feed -l version -d 'Show the version and exit'
