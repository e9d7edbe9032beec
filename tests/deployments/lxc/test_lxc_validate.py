"""Allow-list validators: what may reach a host command line."""

from __future__ import annotations

import pytest

from deployments.lxc import validate as v


@pytest.mark.parametrize("good", ["100", "0100", "999999999"])
def test_vmid_digits_only(good):
    assert v.vmid(good) == str(int(good))


@pytest.mark.parametrize("bad", ["", "10a", "-1", "1 ", "１２３", "100;rm", "1e3", "--purge", True])
def test_vmid_refuses(bad):
    with pytest.raises(v.Invalid):
        v.vmid(bad)


def test_vmids_rejects_whole_list_on_one_bad_element():
    assert v.vmids(["100", "101", "100"]) == ["100", "101"]
    for bad in (["100", "x"], [], "100", [100], None):
        with pytest.raises(v.Invalid):
            v.vmids(bad)


@pytest.mark.parametrize("value,expected", [("64G", "64G"), ("+8G", "+8G"), ("16", "16G"), ("512M", "512M")])
def test_disk_sizes(value, expected):
    assert v.disk_size(value) == expected


@pytest.mark.parametrize("bad", ["-8G", "8GB", "G", "0G", "+0G", "8 G", "8G;", "--size"])
def test_disk_size_refuses(bad):
    with pytest.raises(v.Invalid):
        v.disk_size(bad)


def test_relative_size_refused_where_absolute_needed():
    with pytest.raises(v.Invalid):
        v.disk_size("+8G", relative_ok=False)


@pytest.mark.parametrize("bad", ["-rf", "web;reboot", "a b", "web\n", "x" * 60, "-web"])
def test_hostname_refuses(bad):
    with pytest.raises(v.Invalid):
        v.hostname(bad)


@pytest.mark.parametrize("bad", ["--storage", "local lvm", "local;x", "l"])
def test_storage_refuses(bad):
    with pytest.raises(v.Invalid):
        v.storage(bad)


def test_volid_and_cidr_and_ports():
    assert v.volid("local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst")
    for bad in ("/etc/passwd", "local:images/x", "local:vztmpl/../x", "--x:vztmpl/a"):
        with pytest.raises(v.Invalid):
            v.volid(bad)
    assert v.address_spec("10.0.0.0/8,192.168.1.1", "source_ip") == "10.0.0.0/8,192.168.1.1"
    for bad in ("10.0.0.0/33", "host.example", "1.2.3.4;x", "-1.2.3.4"):
        with pytest.raises(v.Invalid):
            v.address_spec(bad, "source_ip")
    assert v.port_spec("80", "p") == "80" and v.port_spec("1000:2000,22", "p") == "1000:2000,22"
    for bad in ("0", "65536", "80-90", "http", "80;"):
        with pytest.raises(v.Invalid):
            v.port_spec(bad, "p")


def test_protocols_and_choices():
    assert v.protocol("TCP") == "tcp" and v.protocol("6") == "6"
    with pytest.raises(v.Invalid):
        v.protocol("tcp --dport 22")
    assert v.choice("accept", "action", v.RULE_ACTIONS, upper=True) == "ACCEPT"
    with pytest.raises(v.Invalid):
        v.choice("allow", "action", v.RULE_ACTIONS, upper=True)


@pytest.mark.parametrize("char", list(";&|`$(){}"))
def test_exec_refuses_every_spec_metacharacter(char):
    with pytest.raises(v.Invalid, match="forbidden"):
        v.exec_words(f"echo a{char}b")
    with pytest.raises(v.Invalid, match="forbidden"):
        v.exec_words(["echo", f"a{char}b"])


def test_exec_also_refuses_redirects_and_newlines_and_splits_shell_style():
    for text in ("cat < /etc/shadow", "echo x > /etc/motd", "ls\nreboot"):
        with pytest.raises(v.Invalid):
            v.exec_words(text)
    assert v.exec_words("echo 'hello world' x") == ["echo", "hello world", "x"]
    for bad in ("", "   ", [], [1], None):
        with pytest.raises(v.Invalid):
            v.exec_words(bad)


def test_features_password_paths_flags():
    assert v.features("nesting=1, keyctl=1") == "nesting=1,keyctl=1"
    for bad in ("nesting", "nesting=2", "evil=1", "nesting=1;x"):
        with pytest.raises(v.Invalid):
            v.features(bad)
    assert v.password("s3cret pass") == "s3cret pass"
    for bad in ("abc", "pass\nroot:x", "x" * 200):
        with pytest.raises(v.Invalid):
            v.password(bad)
    assert v.abs_path("/var/lib/vz/dump/", "d") == "/var/lib/vz/dump"
    for bad in ("relative/x", "/a/../etc", "/a b", "/a;b", "/a/./b"):
        with pytest.raises(v.Invalid):
            v.abs_path(bad, "d")
    assert v.query_flag("true", "f") is True and v.query_flag(None, "f") is False
    assert v.query_flag("false", "f") is False
    with pytest.raises(v.Invalid):
        v.query_flag("yes", "f")
    assert v.tail(None) == "all" and v.tail("20") == "20"
    with pytest.raises(v.Invalid):
        v.tail("-5")


NUMBER_TRICKS = ["\u0661\u0660", "\uff18\uff10", "\u00b9\u2070", "1" * 5000, "+80", "8_0"]


@pytest.mark.parametrize("text", NUMBER_TRICKS)
def test_numbers_are_ascii_digits_only(text):
    """str.isdigit and int() take other scripts' digits (and stop at 4,300 digits with a
    ValueError naming the limit): each numeric field refuses them as Invalid."""
    for check in (v.port, v.protocol, v.netmask_bits, lambda t: v.positive_int(t, "count")):
        with pytest.raises(v.Invalid):
            check(text)
