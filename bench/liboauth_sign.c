/*
 * liboauth contender of the oauth-sign benchmark: reads oauth-sign records
 * (JSON lines) on stdin, signs each with liboauth (HMAC-SHA1) and writes an
 * envelope like oauth-sign's:
 *   {"ok":true,"line":N,"input":{...},"result":{"method","url","base_string",
 *    "signature","authorization","oauth":{...}}}
 * JSON in and out with jansson. Credentials from TW_CONSUMER_KEY,
 * TW_CONSUMER_SECRET, TW_ACCESS_TOKEN, TW_ACCESS_TOKEN_SECRET; a record's
 * own consumer_key, consumer_secret, token and token_secret override them,
 * as in oauth-sign, and the echoed record has its secrets redacted as
 * oauth-sign's does (contract §2: keys ending in _secret or _token but the
 * page positions, and password, at any depth, case-insensitively).
 *
 * The OAuth steps are liboauth's public functions in the order
 * oauth_sign_array2_process uses them (split URL, add protocol parameters,
 * qsort with oauth_cmpstringp, serialize, oauth_catenc, oauth_sign_hmac_sha1);
 * they are called one by one so that the base string can be reported
 * without computing it twice. Nonce: oauth_gen_nonce (OpenSSL RAND_bytes);
 * timestamp: time(). A record's "nonce"/"timestamp" override both, which
 * makes signatures comparable with the other contenders.
 */
#include <ctype.h>
#include <jansson.h>
#include <oauth.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

struct credentials {
  const char *consumer_key, *consumer_secret, *token, *token_secret;
};

static void add_pair(int *argc, char ***argv, const char *key, const char *value) {
  size_t kl = strlen(key), vl = strlen(value);
  char *pair = malloc(kl + vl + 2);
  if (!pair) abort();
  memcpy(pair, key, kl);
  pair[kl] = '=';
  memcpy(pair + kl + 1, value, vl + 1);
  oauth_add_param_to_array(argc, argv, pair);
  free(pair);
}

/* Scheme and host lower-case, default port and fragment dropped (RFC 5849 §3.4.1.2). */
static char *normalise_url(const char *url) {
  char *out = strdup(url), *p, *host, *end, *port;
  if (!out) abort();
  if ((p = strchr(out, '#'))) *p = '\0';
  if (!(host = strstr(out, "://"))) return out;
  for (p = out; p < host; p++) *p = (char)tolower((unsigned char)*p);
  host += 3;
  end = host + strcspn(host, "/?");
  for (p = host; p < end; p++) *p = (char)tolower((unsigned char)*p);
  port = memchr(host, ':', (size_t)(end - host));
  if (port && ((!strncmp(out, "https:", 6) && end - port == 4 && !strncmp(port, ":443", 4)) ||
               (!strncmp(out, "http:", 5) && end - port == 3 && !strncmp(port, ":80", 3))))
    memmove(port, end, strlen(end) + 1);
  return out;
}

/* params: object of strings (array value = repeated key) or array of [key, value]. */
static int add_record_params(int *argc, char ***argv, json_t *params) {
  const char *key;
  json_t *value, *item;
  size_t i;
  if (!params) return 0;
  if (json_is_object(params)) {
    json_object_foreach(params, key, value) {
      if (json_is_string(value)) {
        add_pair(argc, argv, key, json_string_value(value));
      } else if (json_is_array(value)) {
        json_array_foreach(value, i, item) {
          if (!json_is_string(item)) return -1;
          add_pair(argc, argv, key, json_string_value(item));
        }
      } else {
        return -1;
      }
    }
    return 0;
  }
  if (json_is_array(params)) {
    json_array_foreach(params, i, item) {
      json_t *k = json_array_get(item, 0), *v = json_array_get(item, 1);
      if (json_array_size(item) != 2 || !json_is_string(k) || !json_is_string(v)) return -1;
      add_pair(argc, argv, json_string_value(k), json_string_value(v));
    }
    return 0;
  }
  return -1;
}

static int is_form(const char *content_type) {
  size_t n = strlen("application/x-www-form-urlencoded");
  if (!content_type) return 1;
  while (*content_type == ' ') content_type++;
  return !strncasecmp(content_type, "application/x-www-form-urlencoded", n) &&
         (content_type[n] == '\0' || content_type[n] == ';' || content_type[n] == ' ');
}

static int ends_with(const char *key, size_t length, const char *suffix) {
  size_t n = strlen(suffix);
  return length >= n && !strcasecmp(key + length - n, suffix);
}

static int is_secret(const char *key) {
  size_t length = strlen(key);
  if (ends_with(key, length, "_secret") || !strcasecmp(key, "password")) return 1;
  return ends_with(key, length, "_token") && strcasecmp(key, "pagination_token") && strcasecmp(key, "next_token") &&
         strcasecmp(key, "previous_token");
}

/* Replaces the value of every secret-bearing key in place. */
static void redact(json_t *value) {
  const char *key;
  json_t *member;
  size_t i;
  if (json_is_object(value)) {
    json_object_foreach(value, key, member) {
      if (is_secret(key))
        json_object_set_new(value, key, json_string("[redacted]"));
      else
        redact(member);
    }
  } else if (json_is_array(value)) {
    json_array_foreach(value, i, member) redact(member);
  }
}

/* The record's string member `key`, else `fallback`. */
static const char *given(json_t *record, const char *key, const char *fallback) {
  const char *value = json_string_value(json_object_get(record, key));
  return value ? value : fallback;
}

static json_t *failure(size_t line, json_t *input, const char *message) {
  return json_pack("{s:b,s:I,s:O?,s:{s:s,s:s}}", "ok", 0, "line", (json_int_t)line, "input", input,
                   "error", "kind", "input", "message", message);
}

static json_t *sign_record(size_t line, json_t *record, const struct credentials *environment) {
  struct credentials own = {given(record, "consumer_key", environment->consumer_key),
                            given(record, "consumer_secret", environment->consumer_secret),
                            given(record, "token", environment->token),
                            given(record, "token_secret", environment->token_secret)};
  const struct credentials *cred = &own;
  const char *method_in = json_string_value(json_object_get(record, "method"));
  const char *url_in = json_string_value(json_object_get(record, "url"));
  const char *body = json_string_value(json_object_get(record, "body"));
  const char *content_type = json_string_value(json_object_get(record, "content_type"));
  json_t *nonce_in = json_object_get(record, "nonce"), *timestamp_in = json_object_get(record, "timestamp");
  char method[16], timestamp[32], *url, *request_url, *nonce, *query, *base_string, *key, *signature, *header;
  char **argv = NULL;
  int argc = 0, i, params_in_query;
  size_t n;
  json_t *oauth, *result;

  if (!method_in || !url_in) return failure(line, record, "method and url are required");
  for (n = 0; method_in[n] && n < sizeof method - 1; n++) method[n] = (char)toupper((unsigned char)method_in[n]);
  method[n] = '\0';

  url = normalise_url(url_in);
  argc = oauth_split_url_parameters(url, &argv); /* argv[0] base URL, then decoded query pairs */
  free(url);

  params_in_query = body || !strcmp(method, "GET") || !strcmp(method, "HEAD") || !strcmp(method, "DELETE");
  if (params_in_query && add_record_params(&argc, &argv, json_object_get(record, "params"))) goto bad_params;
  request_url = argc > 1 ? oauth_serialize_url_sep(argc, 0, argv, "&", 1) : strdup(argv[0]);
  if (!params_in_query && add_record_params(&argc, &argv, json_object_get(record, "params"))) {
    free(request_url);
    goto bad_params;
  }
  if (body && is_form(content_type)) { /* only a form body is signed (RFC 5849 §3.4.1.3) */
    char **form = NULL;
    int form_count = oauth_split_post_paramters(body, &form, 1 | 4);
    for (i = 0; i < form_count; i++) oauth_add_param_to_array(&argc, &argv, form[i]);
    oauth_free_array(&form_count, &form);
  }

  nonce = json_is_string(nonce_in) ? strdup(json_string_value(nonce_in)) : oauth_gen_nonce();
  if (json_is_string(timestamp_in))
    snprintf(timestamp, sizeof timestamp, "%s", json_string_value(timestamp_in));
  else if (json_is_integer(timestamp_in))
    snprintf(timestamp, sizeof timestamp, "%" JSON_INTEGER_FORMAT, json_integer_value(timestamp_in));
  else
    snprintf(timestamp, sizeof timestamp, "%ld", (long)time(NULL));
  add_pair(&argc, &argv, "oauth_consumer_key", cred->consumer_key);
  add_pair(&argc, &argv, "oauth_nonce", nonce);
  add_pair(&argc, &argv, "oauth_signature_method", "HMAC-SHA1");
  add_pair(&argc, &argv, "oauth_timestamp", timestamp);
  if (cred->token) add_pair(&argc, &argv, "oauth_token", cred->token);
  add_pair(&argc, &argv, "oauth_version", "1.0");
  free(nonce);

  qsort(&argv[1], (size_t)argc - 1, sizeof(char *), oauth_cmpstringp);
  query = oauth_serialize_url_parameters(argc, argv);
  base_string = oauth_catenc(3, method, argv[0], query);
  key = oauth_catenc(2, cred->consumer_secret, cred->token_secret);
  signature = oauth_sign_hmac_sha1(base_string, key);

  /* oauth_signature goes right before oauth_signature_method, keeping the array sorted. */
  add_pair(&argc, &argv, "oauth_signature", signature);
  for (i = 1; i < argc - 1 && strncmp(argv[i], "oauth_signature_method=", 23); i++) continue;
  if (i < argc - 1) {
    char *moved = argv[argc - 1];
    memmove(&argv[i + 1], &argv[i], (size_t)(argc - 1 - i) * sizeof(char *));
    argv[i] = moved;
  }
  {
    char *pairs = oauth_serialize_url_sep(argc, 1, argv, ", ", 6);
    size_t len = strlen(pairs);
    header = malloc(len + 7);
    if (!header) abort();
    memcpy(header, "OAuth ", 6);
    memcpy(header + 6, pairs, len + 1);
    free(pairs);
  }

  oauth = json_object();
  for (i = 1; i < argc; i++) {
    char *eq = strchr(argv[i], '=');
    if (strncmp(argv[i], "oauth_", 6) || !eq) continue;
    *eq = '\0';
    json_object_set_new(oauth, argv[i], json_string(eq + 1));
    *eq = '=';
  }
  result = json_pack("{s:s,s:s,s:s,s:s,s:s,s:o}", "method", method, "url", request_url, "base_string",
                     base_string, "signature", signature, "authorization", header, "oauth", oauth);

  free(request_url);
  free(query);
  free(base_string);
  free(key);
  free(signature);
  free(header);
  oauth_free_array(&argc, &argv);
  return json_pack("{s:b,s:I,s:O,s:o}", "ok", 1, "line", (json_int_t)line, "input", record, "result", result);

bad_params:
  oauth_free_array(&argc, &argv);
  return failure(line, record, "params: expected an object of strings or an array of [key, value] pairs");
}

int main(void) {
  struct credentials cred = {getenv("TW_CONSUMER_KEY"), getenv("TW_CONSUMER_SECRET"),
                             getenv("TW_ACCESS_TOKEN"), getenv("TW_ACCESS_TOKEN_SECRET")};
  char *line = NULL;
  size_t cap = 0, number = 0;
  ssize_t len;
  int status = 0;

  if (!cred.consumer_key || !cred.consumer_secret) {
    fputs("liboauth_sign: TW_CONSUMER_KEY and TW_CONSUMER_SECRET must be set\n", stderr);
    return 3;
  }
  if (!cred.token_secret) cred.token_secret = "";
  while ((len = getline(&line, &cap, stdin)) != -1) {
    json_error_t error;
    json_t *record, *envelope;
    number++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
    if (strspn(line, " \t") == (size_t)len) continue;
    record = json_loadb(line, (size_t)len, 0, &error);
    if (!json_is_object(record)) {
      envelope = failure(number, NULL, record ? "not a JSON object" : error.text);
    } else {
      envelope = sign_record(number, record, &cred);
    }
    if (json_is_false(json_object_get(envelope, "ok"))) status = 1;
    redact(record); /* the envelope's "input" is the record itself */
    {
      char *text = json_dumps(envelope, JSON_COMPACT); /* one buffer, one write: faster than json_dumpf */
      if (!text) abort();
      fputs(text, stdout);
      putchar('\n');
      free(text);
    }
    json_decref(envelope);
    json_decref(record);
  }
  free(line);
  if (fflush(stdout) == EOF || ferror(stdout)) {
    perror("liboauth_sign: stdout");
    return 1;
  }
  return status;
}
