"""cluster.inventory: a valid file reads back exactly; every bad field is one line naming it and the fix."""

from __future__ import annotations

from pathlib import Path, PurePosixPath

import pytest

from cluster.inventory import InventoryError, load_inventory


@pytest.fixture
def key(tmp_path: Path) -> Path:
    k = tmp_path / "id_test"
    k.write_text("not really a key; only its existence is checked here\n")
    return k


def good(key: Path) -> str:
    return f"""
[ssh]
user = "debian"
key_file = "{key}"
port = 2222

[remote]
base_dir = "/opt/sparkdl"

[master]
host = "10.0.0.10"

[[workers]]
host = "10.0.0.11"
cores = 4
memory = "6g"

[[workers]]
host = "10.0.0.10"
spark_host = "192.168.1.10"
cores = 2
memory = 3000
"""


def write(tmp_path: Path, text: str) -> Path:
    p = tmp_path / "inventory.toml"
    p.write_text(text)
    return p


def error(tmp_path: Path, text: str) -> str:
    with pytest.raises(InventoryError) as e:
        load_inventory(write(tmp_path, text))
    message = str(e.value)
    assert "\n" not in message, message
    return message


def test_a_good_inventory_reads_back(tmp_path, key):
    inv = load_inventory(write(tmp_path, good(key)))
    assert inv.ssh.user == "debian" and inv.ssh.key_file == key and inv.ssh.port == 2222
    assert inv.ssh.known_hosts is None and inv.ssh.passphrase_env is None and not inv.ssh.accept_new_host_keys
    assert inv.remote.base_dir == PurePosixPath("/opt/sparkdl") and inv.remote.python == "python3"
    assert inv.master_url == "spark://10.0.0.10:7077" and inv.webui_url == "http://10.0.0.10:8080"
    w1, w2 = inv.workers
    assert (w1.name, w1.host, w1.spark_host, w1.cores, w1.memory_mb, w1.webui_port) == \
        ("worker-1", "10.0.0.11", "10.0.0.11", 4, 6144, 8081)
    assert (w2.name, w2.spark_host, w2.cores, w2.memory_mb) == ("worker-2", "192.168.1.10", 2, 3000)
    assert inv.hosts == ("10.0.0.10", "10.0.0.11")  # master first, each host once
    assert inv.ssh_port("10.0.0.11") == 2222


def test_relative_paths_are_relative_to_the_inventory(tmp_path, key):
    text = good(key).replace(str(key), key.name) + '\n'
    inv = load_inventory(write(tmp_path, text.replace('port = 2222', 'port = 2222\nknown_hosts = "kh"')))
    assert inv.ssh.key_file == key and inv.ssh.known_hosts == tmp_path / "kh"


def test_two_workers_on_one_host_get_distinct_web_ui_ports(tmp_path, key):
    text = good(key).replace('host = "10.0.0.11"', 'host = "10.0.0.12"').replace(
        'spark_host = "192.168.1.10"\n', "")
    text += '\n[[workers]]\nhost = "10.0.0.12"\ncores = 1\nmemory = "1g"\n'
    inv = load_inventory(write(tmp_path, text))
    assert [w.webui_port for w in inv.workers] == [8081, 8081, 8082]  # 10.0.0.12 twice, 10.0.0.10 once


def test_missing_file_and_bad_toml(tmp_path, key):
    with pytest.raises(InventoryError, match="cannot read the inventory .*nope.toml"):
        load_inventory(tmp_path / "nope.toml")
    assert "is not valid TOML" in error(tmp_path, good(key) + "\n[[workers]\n")


@pytest.mark.parametrize("cut, expected", [
    ('user = "debian"\n', "ssh.user is missing: add it to the [ssh] table"),
    ('[remote]\nbase_dir = "/opt/sparkdl"\n', "[remote] is missing"),
    ('cores = 4\n', "workers[1].cores is missing"),
    ('memory = "6g"\n', "workers[1].memory is missing"),
])
def test_missing_fields_are_named(tmp_path, key, cut, expected):
    text = good(key)
    assert cut in text
    assert expected in error(tmp_path, text.replace(cut, "", 1))


def test_no_workers(tmp_path, key):
    text = good(key).split("[[workers]]")[0]
    assert "workers is missing: add one [[workers]] table" in error(tmp_path, text)


@pytest.mark.parametrize("old, new, expected", [
    ("port = 2222", "port = 70000", "ssh.port = 70000 is not a TCP port: use 1-65535"),
    ("port = 2222", "port = 0", "ssh.port = 0 is not a TCP port"),
    ("port = 2222", 'port = "22"', "ssh.port must be an integer, got '22'"),
    ("port = 2222", "port = true", "ssh.port must be an integer, got True"),
    ('host = "10.0.0.10"\n\n[[', 'host = "10.0.0.10"\nwebui_port = 7077\n\n[[', "master.port and master.webui_port are both 7077"),
    ("cores = 4", "cores = 0", "workers[1].cores = 0: a worker must offer at least 1 core"),
    ("cores = 4", "cores = -2", "workers[1].cores = -2: a worker must offer at least 1 core"),
    ("cores = 4", "cores = 2.5", "workers[1].cores must be an integer"),
    ('memory = "6g"', 'memory = "lots"', "workers[1].memory = 'lots' is not a size: use e.g."),
    ('memory = "6g"', 'memory = "100m"', "below 512 MB"),
    ("cores = 4", "core = 4", "workers[1].core: unknown field; did you mean 'cores'?"),
    ('base_dir = "/opt/sparkdl"', 'base_dir = "opt/sparkdl"', "remote.base_dir = 'opt/sparkdl' must be an absolute path"),
    ('base_dir = "/opt/sparkdl"', 'base_dir = "/opt/../etc"', "must be an absolute path without '..'"),
    ('base_dir = "/opt/sparkdl"', 'base_dir = "/"', "would put the cluster in the root directory"),
    ('host = "10.0.0.11"', 'host = "w1; rm -rf /"', "workers[1].host = 'w1; rm -rf /' is not a host name or IP address"),
    ('user = "debian"', 'user = "root --oProxyCommand=x"', "ssh.user = 'root --oProxyCommand=x' is not a login name"),
])
def test_bad_values_are_named_with_the_fix(tmp_path, key, old, new, expected):
    text = good(key)
    assert old in text
    assert expected in error(tmp_path, text.replace(old, new, 1))


def test_a_missing_key_file(tmp_path, key):
    message = error(tmp_path, good(key).replace(str(key), str(tmp_path / "gone")))
    assert message.startswith("ssh.key_file = ") and "no such file" in message and "ssh-keygen" in message


def test_a_missing_wheelhouse(tmp_path, key):
    text = good(key).replace('base_dir = "/opt/sparkdl"', 'base_dir = "/opt/sparkdl"\nwheelhouse = "wh"')
    assert "remote.wheelhouse = 'wh': no such directory" in error(tmp_path, text)


def test_duplicate_worker_web_ui_port_on_one_host(tmp_path, key):
    text = good(key) + '\n[[workers]]\nhost = "10.0.0.11"\ncores = 1\nmemory = "1g"\nwebui_port = 8081\n'
    assert "workers[3].webui_port = 8081 on 10.0.0.11 is already used by workers[1].webui_port" in error(tmp_path, text)


@pytest.mark.parametrize("field", ["password", "passphrase", "key_passphrase"])
def test_secrets_are_refused_and_never_echoed(tmp_path, key, field):
    secret = "hunter2-very-secret"
    message = error(tmp_path, good(key).replace('user = "debian"', f'user = "debian"\n{field} = "{secret}"'))
    assert f"ssh.{field}: do not put secrets in the inventory" in message
    assert secret not in message


def test_passphrase_env_must_be_a_name_and_is_read_from_the_environment(tmp_path, key, monkeypatch):
    value = "my pass phrase!"
    text = good(key).replace('port = 2222', f'port = 2222\npassphrase_env = "{value}"')
    message = error(tmp_path, text)
    assert "ssh.passphrase_env must be the NAME of an environment variable" in message and value not in message
    inv = load_inventory(write(tmp_path, good(key).replace('port = 2222', 'port = 2222\npassphrase_env = "T8_PW"')))
    monkeypatch.delenv("T8_PW", raising=False)
    assert inv.ssh.passphrase() is None
    monkeypatch.setenv("T8_PW", value)
    assert inv.ssh.passphrase() == value
    assert value not in repr(inv)  # the settings hold the variable's name only
