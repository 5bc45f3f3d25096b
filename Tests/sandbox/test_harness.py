"""Starting the sandbox: the listening line, loopback binding, configs, TLS,
the thread limit, clean shutdown; and the README in step with the code."""
import importlib.util
import pathlib
import socket
import subprocess
import sys

import pytest
import requests

import harness
import sandbox_world

README_PATH = pathlib.Path(harness.__file__).with_name("README.md")


def test_first_stdout_line_and_loopback_binding():
    proc = subprocess.Popen([sys.executable, str(harness.SERVER), "--port", "0"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        line = proc.stdout.readline().decode()
        assert line.startswith("listening 127.0.0.1:") and line.endswith("\n")
        port = int(line.strip().rsplit(":", 1)[1])
        listening = [l.split() for l in pathlib.Path("/proc/net/tcp").read_text().splitlines()[1:]]
        local = [l[1] for l in listening if l[3] == "0A" and int(l[1].split(":")[1], 16) == port]
        assert local == ["0100007F:%04X" % port]
        assert requests.get("http://127.0.0.1:%d/__health" % port).json() == {"ok": True}
    finally:
        proc.terminate()
        assert proc.wait(timeout=5) == 0


def test_config_dict_and_bad_config():
    cfg = harness.default_config()
    cfg["x"]["users"][0]["following"] = 9
    with harness.Sandbox.start(config=cfg) as sb:
        r = requests.get(sb.url + "/2/users/by/username/socialpipe_demo",
                         params={"user.fields": "public_metrics"},
                         headers={"Authorization": "Bearer sandbox-bearer-token"})
        assert r.json()["data"]["public_metrics"]["following_count"] == 10
    cfg["x"]["tokens"][0]["user_id"] = "404"
    with pytest.raises(harness.SandboxError) as info:
        harness.Sandbox.start(config=cfg)
    assert "unknown user_id" in str(info.value)


def test_explicit_port_and_stop():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    sb = harness.Sandbox.start(extra_args=["--port", str(port)])
    assert sb.port == port and sb.url == "http://127.0.0.1:%d" % port
    sb.stop()
    assert sb.process.returncode == 0
    with pytest.raises(requests.ConnectionError):
        requests.get("http://127.0.0.1:%d/__health" % port, timeout=1)


def test_https_with_trustme_certificates(tmp_path):
    tls = harness.TLSFiles.generate(tmp_path)
    with harness.Sandbox.start(tls=tls) as sb:
        assert sb.url.startswith("https://127.0.0.1:")
        r = requests.get(sb.url + "/2/users/by/username/jack", verify=tls.ca,
                         headers={"Authorization": "Bearer sandbox-bearer-token"})
        assert r.json()["data"]["id"] == "12"
        with pytest.raises(requests.exceptions.SSLError):
            requests.get(sb.url + "/__health", verify=True)
        assert sb.posts()["total"] == 0


def test_thread_limit_queues_connections():
    with harness.Sandbox.start(extra_args=["--threads", "1"]) as sb:
        first = socket.create_connection(("127.0.0.1", sb.port))
        first.sendall(b"GET /__health HTTP/1.1\r\nHost: x\r\n\r\n")
        assert b"200 OK" in first.recv(1000)
        with pytest.raises(requests.ReadTimeout):
            requests.get(sb.url + "/__health", timeout=0.5)
        first.close()
        assert requests.get(sb.url + "/__health", timeout=5).status_code == 200


def test_readme_documents_every_control_key_fault_kind_and_default_credential():
    # Loaded by path: the name "sandbox" is also this test directory.
    spec = importlib.util.spec_from_file_location("sandbox_server", harness.SERVER)
    sandbox = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(sandbox)
    README = README_PATH.read_text(encoding="utf-8")
    for key in sandbox.CONTROL_KEYS:
        assert "`%s`" % key in README, key
    for kind in sandbox_world.FAULT_KINDS:
        assert "`%s`" % kind in README, kind
    for key in sandbox_world.MATCH_KEYS:
        assert "`%s`" % key in README, key
    cfg = harness.default_config()
    for tok in cfg["x"]["tokens"] + cfg["facebook"]["tokens"]:
        assert tok["token"] in README, tok["token"]
    for app in cfg["x"]["apps"]:
        assert app["consumer_key"] in README and app["consumer_secret"] in README
    for app in cfg["facebook"]["apps"]:
        assert app["id"] in README and app["secret"] in README
    for endpoint in sandbox_world.DEFAULT_X_RATE_LIMITS:
        assert endpoint in README, endpoint


def test_readme_names_no_machine_path_and_every_default_user():
    README = README_PATH.read_text(encoding="utf-8")
    assert "/work/" not in README and "../shared/docs/reference/x-api.md" in README
    for user in harness.default_config()["x"]["users"]:
        assert "| `%s` | `%s` |" % (user["id"], user["username"]) in README, user["username"]
