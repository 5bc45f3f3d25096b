# fish completion for tw-friends(1), part of socialpipe

# --profile: __socialpipe_profiles, autoloaded from functions/__socialpipe_profiles.fish
# (installed in vendor_functions.d).

# X API v2 user.fields, completed after the last comma of the list typed so far.
function __tw_friends_fields
    set -l prefix (string replace -r -- '^--fields=' '' (commandline -ct) | string replace -r -- '[^,]*$' '')
    for field in affiliation confirmed_email connection_status created_at description entities id \
            is_identity_verified location most_recent_post_id most_recent_tweet_id name parody \
            pinned_post_id pinned_tweet_id profile_banner_url profile_image_url protected public_metrics \
            receives_your_dm subscribes_to_you subscription subscription_type url username verified \
            verified_followers_count verified_type withheld
        echo $prefix$field
    end
end

complete -c tw-friends -f
complete -c tw-friends -l me -d 'List the accounts the authenticated user follows'
complete -c tw-friends -l api -x -a '2\t"API v2 (default)" 1.1\t"API v1.1"' -d 'API version'
complete -c tw-friends -l page-size -x -d 'Accounts per request (v2 1-1000, v1.1 1-5000)'
complete -c tw-friends -l fields -x -a '(__tw_friends_fields)' -d 'User fields to ask for (v2 user.fields)'
complete -c tw-friends -l cost -d "Add each outcome's estimated cost in dollars to its envelope"
complete -c tw-friends -l max-cost -x -d 'Spend at most this many dollars in the run'
complete -c tw-friends -l prices -rF -d 'X prices file'
complete -c tw-friends -l plan -x -a 'self-serve\t"Pay-per-usage (default)" enterprise\t"Enterprise"' -d "The X app's plan"
complete -c tw-friends -s j -l parallel -x -d 'At most N requests in flight (default 4)'
complete -c tw-friends -l unordered -d 'Write outcomes as they complete'
complete -c tw-friends -l dry-run -d 'Build and sign each first request, send nothing'
complete -c tw-friends -l timeout -x -d 'Per-request timeout in seconds (default 30)'
complete -c tw-friends -l retries -x -d 'Retries for retryable failures (default 3)'
complete -c tw-friends -l max-wait -x -d 'Longest rate-limit wait in seconds (default 900)'
complete -c tw-friends -l api-base -x -d 'Base URL of the API'
complete -c tw-friends -l cacert -rF -d 'CA bundle to trust'
complete -c tw-friends -l credentials -rF -d 'Credentials file'
complete -c tw-friends -l profile -x -a '(__socialpipe_profiles)' -d 'Profile in the credentials file'
complete -c tw-friends -s R -l raw-input -d 'Each input line is a username'
complete -c tw-friends -l max-line -x -d 'Longest accepted input line (bytes)'
complete -c tw-friends -l first-line -x -d 'Number of the first input line'
complete -c tw-friends -s v -l verbose -d 'Log each request on stderr'
complete -c tw-friends -s q -l quiet -d 'Quiet: no progress line or input reminder'
complete -c tw-friends -l progress -d 'Show the progress line'
complete -c tw-friends -l no-progress -d 'Never show the progress line'
complete -c tw-friends -s h -l help -d 'Show the help and exit'
complete -c tw-friends -l version -d 'Show the version and exit'
