/*
 * Floor of the oauth-sign benchmark: the I/O and JSON work of a filter with
 * no OAuth work. Each stdin line is parsed with jansson, the record is dumped
 * again, and one line is written:
 *   {"ok":true,"line":N,"input":{...},"result":{"pad":"xxxx..."}}
 * padded so that it is RATIO times as long as the input line (newline
 * included); run.sh passes oauth-sign's measured output/input byte ratio, so
 * the floor writes as many bytes as oauth-sign does.
 * Usage: floor RATIO < records.jsonl > out
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char padding[4096];

int main(int argc, char **argv) {
  double ratio = argc > 1 ? strtod(argv[1], NULL) : 1.0;
  char *line = NULL, prefix[64];
  size_t cap = 0, number = 0;
  ssize_t len;

  if (ratio <= 0) {
    fputs("usage: floor RATIO < records.jsonl\n", stderr);
    return 2;
  }
  memset(padding, 'x', sizeof padding);
  while ((len = getline(&line, &cap, stdin)) != -1) {
    size_t in_bytes = (size_t)len, target, fixed, pad;
    const char *suffix = "\"}}\n";
    json_error_t error;
    json_t *record;
    char *dump;
    int prefix_len;

    number++;
    while (len > 0 && (line[len - 1] == '\n' || line[len - 1] == '\r')) len--;
    if (strspn(line, " \t") == (size_t)len) continue;
    record = json_loadb(line, (size_t)len, 0, &error);
    dump = record ? json_dumps(record, JSON_COMPACT) : NULL;
    prefix_len = snprintf(prefix, sizeof prefix, "{\"ok\":true,\"line\":%zu,\"input\":", number);
    fputs(prefix, stdout);
    fputs(dump ? dump : "null", stdout);
    fputs(",\"result\":{\"pad\":\"", stdout);
    target = (size_t)(ratio * (double)in_bytes + 0.5);
    fixed = (size_t)prefix_len + (dump ? strlen(dump) : 4) + strlen(",\"result\":{\"pad\":\"") + strlen(suffix);
    for (pad = target > fixed ? target - fixed : 0; pad > 0;) {
      size_t chunk = pad < sizeof padding ? pad : sizeof padding;
      fwrite(padding, 1, chunk, stdout);
      pad -= chunk;
    }
    fputs(suffix, stdout);
    free(dump);
    json_decref(record);
  }
  free(line);
  if (fflush(stdout) == EOF || ferror(stdout)) {
    perror("floor: stdout");
    return 1;
  }
  return 0;
}
