"""oauth-sign's output is byte for byte what it was before it read records in
place (issue 21): the stored outputs in same-output/ were written by the build
of aef78f4 from the stored inputs (same-output/make.py says how): the bench's
two data sets, records with and without their own secrets, and lines the bench
never sends, in --format json and curl."""
import gzip
import importlib.util
import pathlib
import subprocess

import pytest
import toolenv

TOOL = "oauth-sign"
HERE = pathlib.Path(__file__).resolve().parent / "same-output"
# The maker, for the environment the stored outputs were made in.
_spec = importlib.util.spec_from_file_location("same_output_make", HERE / "make.py")
make = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(make)


def read(name):
    return gzip.decompress((HERE / name).read_bytes())


@pytest.mark.parametrize("data_set", ["plain", "secrets"])
@pytest.mark.parametrize("output_format", ["json", "curl"])
def test_output_is_byte_identical_to_the_stored_one(bin_path, home, data_set, output_format):
    environment = toolenv.clean_env(home, make.ENVIRONMENT)
    run = subprocess.run([bin_path, "--format", output_format], input=read(f"{data_set}.in.jsonl.gz"),
                         capture_output=True, env=environment, timeout=60)
    assert run.returncode == 1, run.stderr
    expected = read(f"{data_set}.{output_format}.out.gz")
    if run.stdout != expected:
        got, want = run.stdout.splitlines(), expected.splitlines()
        first = next((index for index, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
        pytest.fail(f"line {first + 1} differs ({len(got)} lines, {len(want)} expected):\n"
                    f"got:      {got[first] if first < len(got) else b'(none)'}\n"
                    f"expected: {want[first] if first < len(want) else b'(none)'}")
