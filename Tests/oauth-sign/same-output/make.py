"""Writes the inputs and expected outputs of test_same_output.py: 300 seeded
records of each of the bench's data sets (bench/gen_oauth_records.py, without
and with --secrets), each with its own nonce and timestamp so that the output
is fixed, then the same lines the bench never sends (escapes, numbers,
duplicate and nested secret-bearing keys, errors). The expected outputs are
those of the oauth-sign given, built from the commit before oauth-sign read
records in place (aef78f4); they are not to be remade from a later build.

Usage: python3 make.py OAUTH_SIGN
"""
import gzip
import json
import os
import pathlib
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
GENERATOR = HERE.parents[2] / "bench" / "gen_oauth_records.py"
COUNT = 300
SEED = 2121
# What test_same_output.py passes: made-up credentials, as the bench's.
ENVIRONMENT = {
    "TW_CONSUMER_KEY": "xvz1evFS4wEEPTGEFPHBog",
    "TW_CONSUMER_SECRET": "kAcSOqF21Fu85e7zjz7ZN2U4ZRhfV3WpwPAoE3Z7kBw",
    "TW_ACCESS_TOKEN": "370773112-GmHxMAgYyLbNEtIKZeRNFsMKPR9EyMZeS9weJAEb",
    "TW_ACCESS_TOKEN_SECRET": "LswwdoUaIvS8ltyTt5jkRh4J50vUPVVHtR2YPi5kE",
}
FORMATS = ("json", "curl")

# Written as they stand (not through json.dumps), one per line.
EDGE_LINES = r'''
  {"method" : "get" ,	"url":"https://api.x.com/2/users/me" , "nonce":"e01","timestamp":1 }  
{"method":"POST","url":"https://api.x.com/2/tweets","body":"{\"text\":\"caf\u00e9 \ud83d\ude00 \/ x\"}","content_type":"application/json","nonce":"e02","timestamp":"2","consumer_secret":"cs","token_secret":"ts"}
{"method":"POST","url":"https://api.x.com/2/tweets","body":"{\"text\":\"tab\\there\\nline \\\"q\\\" back\\\\slash\"}","content_type":"application/json","nonce":"e03","timestamp":3}
{"method":"GET","url":"https://api.x.com/2/a","x":1.50,"y":-0,"z":1e2,"consumer_secret":"s4","nonce":"e04","timestamp":4}
{"method":"GET","url":"https://api.x.com/2/a","x":1.50,"y":-0,"z":1e2,"nonce":"e05","timestamp":5}
{"method":"GET","url":"https://api.x.com/2/a","n":12345678901234567890,"nonce":"e06","timestamp":6}
{"method":"GET","url":"https://api.x.com/2/a","n":123456789012345678,"m":-42,"token_secret":"s7","nonce":"e07","timestamp":7}
{"method":"GET","method":"POST","url":"https://api.x.com/2/a","nonce":"e08","timestamp":8}
{"method":"GET","url":"https://api.x.com/2/a","params":{"q":"1","q":"2"},"token_secret":"s9","nonce":"e09","timestamp":9}
{"method":"GET","url":"https://api.x.com/2/b","params":{"access_token":"zzz","pagination_token":"p","Consumer_Secret":{"a":1}},"extra":[{"PASSWORD":"pw","n":[1,{"bearer_token":"b","next_token":"n"}]}],"nonce":"e10","timestamp":10}
{"method":"GET","url":"https://api.x.com/2/b","extra":{"deep":[[[{"app_secret":[1,2,{"x":"y"}]}]]]},"nonce":"e11","timestamp":11}
{"method":"GET","url":"https://api.x.com/2/c","tok\u0065n":"T12","consumer_secret":"s12","nonce":"e12","timestamp":12}
{"method":"GET","url":"https://api.x.com/2/c","a\"b":"c","x\\_secret":"s","q\n_token":"t","_secre\t":"u","nonce":"e13","timestamp":13}
{"method":"GET","url":"https://api.x.com/2/c","a\"b":"c","q\n_tokens":"t","nonce":"e14","timestamp":14}
{"method":"GET","url":"https://api.x.com/2/d","token_secret":null,"nonce":"e15","timestamp":15}
{"method":"GET","url":"https://api.x.com/2/d","consumer_secret":123,"nonce":"e16","timestamp":16}
{"method":"GET","url":"https://api.x.com/2/d","consumer_secret":"a\"b\\c\u0001d\n","token":"t\"17","token_secret":"\t","nonce":"e17","timestamp":17}
{"method":"GET","url":"https://api.x.com/2/e?a=1&b=%20","params":{"c":["1","2"],"d":"line\nbreak \"quoted\" \\ /"},"realm":"R e","callback":"oob","verifier":"v","consumer_secret":"s","nonce":"e18","timestamp":18}
{"method":"POST","url":"https://api.x.com/1.1/statuses/update.json","params":[["status","a b"],["status","c"],["x\"y","z"]],"consumer_secret":"s","nonce":"e19","timestamp":"19"}
{"method":"POST","url":"https://api.x.com/1.1/statuses/update.json","params":{"s":"\u0001x\u00e9\u001F"},"token_secret":"s","nonce":"e20","timestamp":20}
{"method":"PUT","url":"https://api.x.com/2/f","body":"a=1&b=2","nonce":"e21","timestamp":21,"signature_method":"HMAC-SHA256","token_secret":"s"}
{"method":"POST","url":"https://api.x.com/2/f","body":"{}","content_type":"application/json","body_hash":true,"nonce":"e22","timestamp":22,"consumer_secret":"s"}
{"method":"DELETE","url":"https://api.x.com/2/f","version":null,"signature_method":"PLAINTEXT","consumer_secret":"c&s","token_secret":"t s","nonce":"e23","timestamp":23}
{"method":"GET","url":"http://api.x.com/2/f","signature_method":"PLAINTEXT","consumer_secret":"c","token_secret":"t","nonce":"e24","timestamp":24}
{"method":"POST","url":"https://api.x.com/2/f","body":"a\u0000b","nonce":"e25","timestamp":25}
{"method":"POST","url":"https://api.x.com/2/f","body":"a\u0000b","token_secret":"s","nonce":"e26","timestamp":26}
{}
{"url":"https://api.x.com/2/g","consumer_secret":"s"}
{"method":"FETCH","url":"https://api.x.com/2/g","token_secret":"s"}
{"method":"GET","url":"https://api.x.com/2/g","params":7,"token_secret":"s"}
{"method":"GET","url":"https://api.x.com/2/g","params":{"a":["1",2]},"token_secret":"s"}
{"method":"GET","url":"https://api.x.com/2/g","timestamp":-5,"token_secret":"s"}
{"method":"GET","url":"https://api.x.com/2/g","timestamp":"12a"}
{"method":"GET","url":"https://api.x.com/2/g/%2E%2E/h","consumer_secret":"s"}
{"method":"GET","url":"https://api.x.com/2/g/../h/./i","consumer_secret":"s","nonce":"e35","timestamp":35}
{"method":"HEAD","url":"HTTPS://API.X.COM:443/Case?x=%7e","body":"b","consumer_secret":"s"}
{"method":"GET","url":"https://api.x.com/2/j","content_type":"text/plain","token_secret":"s"}
{"method":"gét","url":"https://api.x.com/2/j","token_secret":"s"}
{"method":"get","url":"https://api.x.com/2/j","signature_method":"RSA-SHA1","token_secret":"s"}
{"method":"GET","url":"https://api.x.com/2/j","version":"1.0a","body_hash":false,"token_secret":"s","nonce":"e40","timestamp":40}
"hello"
[1,{"consumer_secret":"s"}]
{"method":"GET","url":"https://api.x.com/2/k","consumer_secret":"s"
{"method":"GET","url":"https://api.x.com/2/k","consumer_secret":"s"} x
{"method":"GET","url":"https://api.x.com/2/k","consumer_secret":"s", "note":"\x"}

   	
{"method":"GET","url":"https://api.x.com/2/l","a":[],"b":{},"c":[{}],"d":true,"e":false,"f":null,"token_secret":"s","nonce":"e48","timestamp":48}
{"method":"GET","url":"https://api.x.com/2/l","a":[],"b":{},"c":[{}],"d":true,"e":false,"f":null,"nonce":"e49","timestamp":49}
{"method":"GET","url":"https://api.x.com/2/m","":"empty key","consumer_key":"ck","token":"tk","nonce":"e50","timestamp":50}
{"method":"GET","url":"https://api.x.com/2/m","token":"","token_secret":"","consumer_secret":"","nonce":"e51","timestamp":51}
'''.strip("\n").split("\n")


def generated(secrets):
    command = [sys.executable, str(GENERATOR), "-n", str(COUNT), "--seed", str(SEED)] + (["--secrets"] if secrets else [])
    lines = subprocess.run(command, check=True, capture_output=True, text=True).stdout.splitlines()
    records = []
    for number, line in enumerate(lines):
        record = json.loads(line)
        # Both forms of a timestamp; the nonce where a proxy would put it.
        record["nonce"] = "n%04d" % number
        record["timestamp"] = 1700000000 + number if number % 2 else str(1700000000 + number)
        records.append(json.dumps(record, ensure_ascii=False, separators=(",", ":")))
    return records


def main():
    oauth_sign = sys.argv[1]
    environment = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(HERE), "LC_ALL": "C.UTF-8",
                   "XDG_CONFIG_HOME": str(HERE / "no-such-directory"), **ENVIRONMENT}
    for name, secrets in (("plain", False), ("secrets", True)):
        text = ("\n".join(generated(secrets) + EDGE_LINES) + "\n").encode("utf-8")
        (HERE / f"{name}.in.jsonl.gz").write_bytes(gzip.compress(text, mtime=0))
        for output_format in FORMATS:
            run = subprocess.run([oauth_sign, "--format", output_format], input=text, capture_output=True, env=environment)
            assert run.returncode == 1, run
            (HERE / f"{name}.{output_format}.out.gz").write_bytes(gzip.compress(run.stdout, mtime=0))


if __name__ == "__main__":
    main()
