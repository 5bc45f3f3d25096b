"""Check that the benchmark's signers agree: same base string and signature per record.

Not part of `make bench`. Usage (TW_* credentials in the environment):
  python bench/crosscheck.py RECORDS.jsonl N 'CMD1' 'CMD2' ...
Each of the first N records gets a fixed "nonce" and "timestamp"; every command
(a shell command reading records on stdin) signs them; the results are compared
line by line against the first command's.
"""
import json
import subprocess
import sys


def main():
    records_path, count, commands = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
    lines = []
    with open(records_path, encoding="utf-8") as records:
        for number, line in enumerate(records):
            if number == count:
                break
            record = json.loads(line)
            record["nonce"] = "n%031d" % number
            record["timestamp"] = str(1700000000 + number)
            lines.append(json.dumps(record, ensure_ascii=False))
    stdin = ("\n".join(lines) + "\n").encode()
    outputs = []
    for command in commands:
        run = subprocess.run(command, shell=True, input=stdin, capture_output=True, check=False)
        results = [json.loads(line).get("result") or {} for line in run.stdout.decode().splitlines()]
        print("%-60s exit %d, %d results" % (command[-60:], run.returncode, len(results)))
        outputs.append(results)
    mismatches = 0
    for other, command in zip(outputs[1:], commands[1:]):
        for number, (want, got) in enumerate(zip(outputs[0], other), 1):
            for field in ("base_string", "signature"):
                if want.get(field) != got.get(field):
                    mismatches += 1
                    if mismatches <= 5:
                        print("line %d %s differs (%s):\n  %s\n  %s"
                              % (number, field, command, want.get(field), got.get(field)))
        if len(other) != len(outputs[0]):
            mismatches += 1
            print("%s: %d results, expected %d" % (command, len(other), len(outputs[0])))
    print("agree" if mismatches == 0 else "%d mismatches" % mismatches)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
