# fish completion for tw-post(1), part of socialpipe

# --profile: __socialpipe_profiles, autoloaded from functions/__socialpipe_profiles.fish
# (installed in vendor_functions.d).

complete -c tw-post -f
complete -c tw-post -l thread -d 'Each post replies to the one before it'
complete -c tw-post -l api -x -a '2\t"API v2 (default)" 1.1\t"API v1.1"' -d 'API version'
complete -c tw-post -l max-length -x -d 'Largest weighted length accepted (default 280)'
complete -c tw-post -l no-length-check -d 'Do not measure the text'
complete -c tw-post -l media-dir -x -a '(__fish_complete_directories)' -d 'Directory the media paths are in (default .)'
complete -c tw-post -l cost -d "Add each outcome's estimated cost in dollars to its envelope"
complete -c tw-post -l max-cost -x -d 'Spend at most this many dollars in the run'
complete -c tw-post -l prices -rF -d 'X prices file'
complete -c tw-post -l plan -x -a 'self-serve\t"Pay-per-usage (default)" enterprise\t"Enterprise"' -d "The X app's plan"
complete -c tw-post -s j -l parallel -x -d 'At most N posts in flight (default 1)'
complete -c tw-post -l unordered -d 'Write outcomes as they complete'
complete -c tw-post -l dry-run -d 'Build and sign each request, send nothing'
complete -c tw-post -l timeout -x -d 'Per-request timeout in seconds (default 30)'
complete -c tw-post -l retries -x -d 'Retries for retryable failures (default 3)'
complete -c tw-post -l max-wait -x -d 'Longest rate-limit wait in seconds (default 900)'
complete -c tw-post -l api-base -x -d 'Base URL of the API'
complete -c tw-post -l cacert -rF -d 'CA bundle to trust'
complete -c tw-post -l credentials -rF -d 'Credentials file'
complete -c tw-post -l profile -x -a '(__socialpipe_profiles)' -d 'Profile in the credentials file'
complete -c tw-post -s R -l raw-input -d 'Each input line is the text of a post'
complete -c tw-post -l max-line -x -d 'Longest accepted input line (bytes)'
complete -c tw-post -l first-line -x -d 'Number of the first input line'
complete -c tw-post -s v -l verbose -d 'Log each request on stderr'
complete -c tw-post -s q -l quiet -d 'Quiet: no progress line or input reminder'
complete -c tw-post -l progress -d 'Show the progress line'
complete -c tw-post -l no-progress -d 'Never show the progress line'
complete -c tw-post -s h -l help -d 'Show the help and exit'
complete -c tw-post -l version -d 'Show the version and exit'
