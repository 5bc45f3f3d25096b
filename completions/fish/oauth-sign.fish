# fish completion for oauth-sign(1), part of socialpipe

# --profile: __socialpipe_profiles, autoloaded from functions/__socialpipe_profiles.fish
# (installed in vendor_functions.d).

complete -c oauth-sign -f
complete -c oauth-sign -l format -x -a 'json\t"the socialpipe envelope (default)" header\t"an Authorization header line" curl\t"a curl config block"' -d 'Output format'
complete -c oauth-sign -l rsa-key -rF -d 'PEM private key for RSA-SHA1 records'
complete -c oauth-sign -l credentials -rF -d 'Credentials file'
complete -c oauth-sign -l profile -x -a '(__socialpipe_profiles)' -d 'Profile in the credentials file'
complete -c oauth-sign -l max-line -x -d 'Longest accepted input line (bytes)'
complete -c oauth-sign -l first-line -x -d 'Number of the first input line'
complete -c oauth-sign -s h -l help -d 'Show the help and exit'
complete -c oauth-sign -l version -d 'Show the version and exit'
