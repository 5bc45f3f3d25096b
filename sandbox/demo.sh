#!/bin/sh
# `make demo`: a short tour of socialpipe against the local API sandbox.
# Needs SOCIALPIPE_BIN (the built tools) and PYTHON (the project's venv).
set -eu

bin=${SOCIALPIPE_BIN:?set SOCIALPIPE_BIN to the directory of the built tools}
python=${PYTHON:-python3}
here=$(cd "$(dirname "$0")" && pwd)
work=$(mktemp -d)
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null
    rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 130' INT TERM
PATH="$bin:$PATH"
export PATH

"$python" "$here/sandbox.py" --port 0 >"$work/sandbox.out" 2>"$work/sandbox.err" &
pid=$!
tries=0
until grep -q '^listening ' "$work/sandbox.out" 2>/dev/null; do
    tries=$((tries + 1))
    if [ "$tries" -gt 100 ] || ! kill -0 "$pid" 2>/dev/null; then
        echo "demo: the sandbox did not start:" >&2
        cat "$work/sandbox.err" >&2
        exit 1
    fi
    sleep 0.1
done
base="http://$(sed -n 's/^listening //p' "$work/sandbox.out" | head -n 1)"

# The sandbox's documented demo credentials (sandbox/README.md); the user's
# own credentials file is kept out of the way.
TW_API_BASE=$base
FB_API_BASE=$base
TW_CONSUMER_KEY=sandbox-consumer-key
TW_CONSUMER_SECRET=sandbox-consumer-secret
TW_ACCESS_TOKEN=1000000000000000001-sandboxaccesstoken
TW_ACCESS_TOKEN_SECRET=sandbox-access-token-secret
FB_ACCESS_TOKEN=sandbox-fb-page-token
XDG_CONFIG_HOME=$work
export TW_API_BASE FB_API_BASE TW_CONSUMER_KEY TW_CONSUMER_SECRET TW_ACCESS_TOKEN TW_ACCESS_TOKEN_SECRET \
    FB_ACCESS_TOKEN XDG_CONFIG_HOME

# Bold headings only on a terminal: `make demo > file` gets plain text.
bold='' plain=''
if [ -t 1 ]; then bold=$(printf '\033[1m') plain=$(printf '\033[0m'); fi
step() {
    printf '\n%s== %s%s\n' "$bold" "$1" "$plain"
    printf '$ %s\n' "$2"
}

echo "sandbox (X API v2/v1.1 and Graph API stand-in) at $base"

step "oauth-sign signs a request offline (RFC 5849); the record is JSON, so is the answer" \
     "echo '{\"method\":\"POST\",\"url\":\"$base/1.1/statuses/update.json\",\"params\":{\"status\":\"Hello, Ladies + Gentlemen\"}}' | oauth-sign | jq .result"
echo "{\"method\":\"POST\",\"url\":\"$base/1.1/statuses/update.json\",\"params\":{\"status\":\"Hello, Ladies + Gentlemen\"}}" \
    | oauth-sign | jq .result

step "…and curl sends what it signed: oauth-sign --format curl | curl -K -" \
     "printf '%s\\n' '{\"method\":\"POST\",…update.json,…}' '{\"method\":\"GET\",…/2/users/me,…}' | oauth-sign --format curl | curl -sS -K - | jq -c '.data // {id_str, text}'"
printf '%s\n' \
    "{\"method\":\"POST\",\"url\":\"$base/1.1/statuses/update.json\",\"params\":{\"status\":\"signed by oauth-sign, sent by curl\"}}" \
    "{\"method\":\"GET\",\"url\":\"$base/2/users/me\",\"params\":{\"user.fields\":\"created_at\"}}" \
    | oauth-sign --format curl | curl -sS -K - | jq -c '.data // {id_str, text}'
echo "the sandbox checked both signatures:"
curl -sS "$base/__log?limit=2" | jq -c '.[] | {method, path, status, signature: .auth.outcome}'

step "tw-post posts each line as it arrives (one too long, one a duplicate)" \
     "printf '%s\\n' … | tw-post | jq -c '{line, ok, id: .result.id, error: .error.kind, why: .error.message}'"
long=$(printf 'socialpipe%.0s ' $(seq 1 30))
printf '%s\n' \
    '"Shipping socialpipe 0.1 today: Unix filters for the X and Graph APIs"' \
    "{\"text\": \"$long\"}" \
    '{"text": "Works in pipelines: tw-friends jack | jq -r .result.username"}' \
    '"Shipping socialpipe 0.1 today: Unix filters for the X and Graph APIs"' \
    | tw-post >"$work/posts.jsonl" || true
jq -c '{line, ok, id: .result.id, error: .error.kind, why: .error.message}' "$work/posts.jsonl"
echo "exit status 1 tells a Makefile that a record failed; jq picks out what to retry:"
printf '$ jq -c "select(.ok == false) | .input" posts.jsonl\n'
jq -c 'select(.ok == false) | .input' "$work/posts.jsonl"

step "a three-post thread: each post replies to the one before" \
     "tw-post --thread '1/3 …' '2/3 …' '3/3 …' | jq -r .result.id"
tw-post --thread \
    "1/3 socialpipe reads JSON lines on stdin" \
    "2/3 and writes one JSON envelope per record" \
    "3/3 so jq, xargs and make can take it from there" | jq -r .result.id
echo "what the sandbox received:"
curl -sS "$base/__posts" | jq -c '.posts[-3:][] | {id, text, in_reply_to_tweet_id}'

step "a post with a picture: the file is uploaded in chunks from --media-dir, then attached" \
     "jq -nc '{text: \"release 1.2\", media: [{path: \"shots/ui.png\", alt: \"the new settings page\"}]}' | tw-post | jq -c .result"
mkdir -p "$work/shots"
# A PNG header and 1 MiB of noise: X (and the sandbox) judge the kind by the first bytes.
{ printf '\211PNG\r\n\032\n'; head -c 1048576 /dev/urandom; } >"$work/shots/ui.png"
(cd "$work" && jq -nc '{text: "release 1.2", media: [{path: "shots/ui.png", alt: "the new settings page"}]}' \
    | tw-post | jq -c .result)
echo "what the sandbox received (one segment: the file is under 4 MiB):"
curl -sS "$base/__media" | jq -c '.media[-1] | {id, media_type, media_category, segments, alt_text}'
echo "records cannot reach outside --media-dir (default: the current directory):"
printf '$ echo %s | tw-post | jq -c .error\n' "'{\"text\": \"x\", \"media\": [\"../../etc/passwd\"]}'"
(cd "$work" && echo '{"text": "x", "media": ["../../etc/passwd"]}' | tw-post 2>/dev/null | jq -c .error) || true

step "tw-friends lists the accounts a user follows, one line each: jack follows 1,000,000" \
     "tw-friends jack | head -n 5 | jq -r .result.username"
tw-friends jack | head -n 5 | jq -r .result.username
echo "head stopped the walk: the sandbox served this many of jack's 1000 pages:"
curl -sS "$base/__log" | jq '[.[] | select(.endpoint == "GET /2/users/:id/following")] | length'

step "a record can ask for less: max, and more fields (v2 user.fields)" \
     "echo '{\"username\":\"follows_1001\",\"max\":3}' | tw-friends --fields created_at,public_metrics | jq -c .result"
echo '{"username":"follows_1001","max":3}' | tw-friends --fields created_at,public_metrics | jq -c .result

step "a list cut short by the rate limit ends with a resume record" \
     "tw-friends --max-wait 0 follows_25000 > part1.jsonl; jq -c 'select(.ok | not) | .error' part1.jsonl"
echo "(the sandbox's window for GET /2/users/:id/following lowered to 1 request per 15 minutes)"
curl -sS "$base/__control" -d '{"rate_limits":{"GET /2/users/:id/following":{"limit":1,"window":900}}}' >/dev/null
tw-friends --max-wait 0 follows_25000 >"$work/part1.jsonl" || echo "exit status $?: the list is not complete"
jq -c 'select(.ok | not) | .error' "$work/part1.jsonl"
printf 'accounts written before it stopped: '
jq -s 'map(select(.ok)) | length' "$work/part1.jsonl"

step "…fed back as a record once the window has reset, the resume lists exactly the rest" \
     "jq -c 'select(.ok | not) | .error.resume' part1.jsonl | tw-friends > part2.jsonl"
echo "(the sandbox's window back to 300 requests, which starts it over)"
curl -sS "$base/__control" -d '{"rate_limits":{"GET /2/users/:id/following":{"limit":300,"window":900}}}' >/dev/null
jq -c 'select(.ok | not) | .error.resume' "$work/part1.jsonl" | tw-friends >"$work/part2.jsonl"
printf 'accounts in part 2: '
jq -s length "$work/part2.jsonl"
printf 'both parts: %s accounts, %s distinct (follows_25000 follows 25,000)\n' \
    "$(cat "$work/part1.jsonl" "$work/part2.jsonl" | jq -r 'select(.ok) | .result.id' | wc -l | tr -d ' ')" \
    "$(cat "$work/part1.jsonl" "$work/part2.jsonl" | jq -r 'select(.ok) | .result.id' | sort -u | wc -l | tr -d ' ')"

# What a run costs (issue 19, contract §7): X bills by use, and the sandbox
# charges as X does, keeping a ledger (GET /__ledger). A budget stops a list
# where the money does; the resume goes on with a new one.
step "what a list would cost, asked before sending anything: --dry-run --cost" \
     "tw-friends --dry-run --cost follows_25000 | jq .cost"
tw-friends --dry-run --cost follows_25000 | jq .cost

step "--max-cost 25 stops follows_25000's list (25,000 accounts, \$250 worth) at its budget" \
     "tw-friends --max-cost 25 follows_25000 > budget1.jsonl; jq -c 'select(.ok | not) | .error' budget1.jsonl"
echo "(the sandbox's ledger emptied: X charges a list read twice in one day once, and follows_25000 was read above)"
curl -sS -X DELETE "$base/__ledger" >/dev/null
tw-friends --max-cost 25 follows_25000 >"$work/budget1.jsonl" || echo "exit status $?: the list is not complete"
jq -c 'select(.ok | not) | .error' "$work/budget1.jsonl"
printf 'accounts written before the budget ran out: '
jq -s 'map(select(.ok)) | length' "$work/budget1.jsonl"
echo "what the sandbox charged, from its ledger (a page cut to the money left):"
curl -sS "$base/__ledger" | jq -c '{total, charges: [.charges[] | "\(.key) \(.units)"]}'
spent=$(curl -sS "$base/__ledger" | jq .total)

step "…fed back with a new budget, the resume lists exactly the rest" \
     "jq -c 'select(.ok | not) | .error.resume' budget1.jsonl | tw-friends --max-cost 250 > budget2.jsonl"
jq -c 'select(.ok | not) | .error.resume' "$work/budget1.jsonl" | tw-friends --max-cost 250 >"$work/budget2.jsonl"
printf 'accounts in part 2: '
jq -s length "$work/budget2.jsonl"
printf 'both parts: %s accounts, %s distinct (follows_25000 follows 25,000)\n' \
    "$(cat "$work/budget1.jsonl" "$work/budget2.jsonl" | jq -r 'select(.ok) | .result.id' | wc -l | tr -d ' ')" \
    "$(cat "$work/budget1.jsonl" "$work/budget2.jsonl" | jq -r 'select(.ok) | .result.id' | sort -u | wc -l | tr -d ' ')"
total=$(curl -sS "$base/__ledger" | jq .total)
printf 'the ledger: $%s in all, $%s for part 2 (its lookup was charged once today already)\n' \
    "$total" "$(awk -v a="$spent" -v b="$total" 'BEGIN { printf "%.2f", b - a }')"

step "fb-feed posts on a Facebook Page with the Page's access token (FB_ACCESS_TOKEN)" \
     "fb-feed 'socialpipe 0.1: Unix filters for the X and Graph APIs' | jq -c ."
fb-feed 'socialpipe 0.1: Unix filters for the X and Graph APIs' | jq -c .
echo "what the sandbox received:"
curl -sS "$base/__posts?service=facebook" | jq -c '.posts[-1] | {id, page_id, message, published}'

step "--batch 50: 120 posts travel in Graph batch requests of up to 50, each post keeps its envelope" \
     "seq 120 | jq -c '{message: \"Tip \\(.) of 120: pipe JSON lines into fb-feed\"}' | fb-feed --batch 50 | jq -s 'map(select(.ok)) | length'"
since=$(curl -sS "$base/__log?limit=1" | jq '.[0].seq // 0')
seq 120 | jq -c '{message: "Tip \(.) of 120: pipe JSON lines into fb-feed"}' \
    | fb-feed --batch 50 >"$work/tips.jsonl"
printf 'ok envelopes: '
jq -s 'map(select(.ok)) | length' "$work/tips.jsonl"
printf 'batch requests the sandbox received, and the posts in each: '
curl -sS "$base/__log?since=$since" | jq -c '[.[] | select(.endpoint == "POST /") | (.batch | length)]'

step "the old wall-post fields are refused before sending: Facebook has ignored them since July 2017" \
     "echo '{\"message\":\"New on the blog\",\"link\":\"https://example.org/blog/pipes\",\"picture\":\"https://example.org/cover.png\"}' | fb-feed | jq -c '{ok, error: .error.kind, why: .error.message}'"
echo '{"message":"New on the blog","link":"https://example.org/blog/pipes","picture":"https://example.org/cover.png"}' \
    | fb-feed >"$work/legacy.jsonl" || echo "exit status $?: nothing was sent"
jq -c '{ok, error: .error.kind, why: .error.message}' "$work/legacy.jsonl"

# fb-perm-check reads a user's permissions, so it asks with the demo user's
# token; fb-feed keeps posting with the Page's (FB_ACCESS_TOKEN).
user_token=sandbox-fb-user-token
fb_posts() { curl -sS "$base/__posts?service=facebook" | jq '.posts | length'; }

step "fb-perm-check gates a post: exit status 0 only when every permission asked about is granted" \
     "FB_ACCESS_TOKEN=$user_token fb-perm-check -q pages_manage_posts pages_read_engagement && fb-feed 'socialpipe 0.2 is out: fb-perm-check gates posts' | jq -c ."
if FB_ACCESS_TOKEN=$user_token fb-perm-check -q pages_manage_posts pages_read_engagement; then
    echo "exit status 0: both granted, so fb-feed posts:"
    fb-feed 'socialpipe 0.2 is out: fb-perm-check gates posts' | jq -c .
else
    echo "demo: the gate stopped a post it should have let through" >&2
    exit 1
fi

step "…and stops it once the Page's admin takes pages_manage_posts back (-q: nothing on stdout)" \
     "FB_ACCESS_TOKEN=$user_token fb-perm-check -q pages_manage_posts pages_read_engagement && fb-feed 'socialpipe 0.2.1 is out'"
curl -sS -X DELETE -H "Authorization: Bearer $user_token" \
    "$base/v27.0/me/permissions/pages_manage_posts" >/dev/null
before=$(fb_posts)
status=0
FB_ACCESS_TOKEN=$user_token fb-perm-check -q pages_manage_posts pages_read_engagement \
    && fb-feed 'socialpipe 0.2.1 is out' || status=$?
if [ "$status" -eq 0 ]; then
    echo "demo: the gate let through a post it should have stopped" >&2
    exit 1
fi
echo "exit status $status: not granted, so fb-feed did not run"
printf 'posts on the Page before and after: %s %s\n' "$before" "$(fb_posts)"

step "a list record answers every name; removed ones say what replaced them" \
     "echo '{\"permissions\":[\"pages_show_list\",\"pages_manage_posts\",\"pages_read_engagement\",\"publish_actions\"]}' | FB_ACCESS_TOKEN=$user_token fb-perm-check | jq -c .result"
status=0
echo '{"permissions":["pages_show_list","pages_manage_posts","pages_read_engagement","publish_actions"]}' \
    | FB_ACCESS_TOKEN=$user_token fb-perm-check >"$work/perms.jsonl" || status=$?
jq -c .result "$work/perms.jsonl"
echo "exit status $status"

step "nothing posted twice" "curl -s $base/__posts | jq '{total, duplicates}'"
curl -sS "$base/__posts" | jq -c '{total, duplicates}'
