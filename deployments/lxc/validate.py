"""Allow-list validation of every value that can reach a host command line.

Each function returns the normalised value or raises `Invalid` with a message
for the 400 body. Nothing here talks to a host; the rule is that a value is
accepted only when it matches what the field can legitimately hold, so no value
can carry an option (leading `-`), shell syntax or a newline.
"""

from __future__ import annotations

import ipaddress
import re
from collections.abc import Iterable

EXEC_FORBIDDEN = set(";&|`$(){}")
EXEC_ALSO_FORBIDDEN = set("<>\n\r\x00")
EXEC_MAX_CHARS = 16_384
EXEC_MAX_WORDS = 1_024
VMID_MIN = 100
VMID_MAX = 999_999_999
MAX_BULK_IDS = 100

_DIGITS = re.compile(r"[0-9]{1,64}")
_HOSTNAME = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,48}[A-Za-z0-9])?$")
_NODE = re.compile(r"^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$")
_STORAGE = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-]{0,38}[A-Za-z0-9]$")
_VOLID = re.compile(r"^[A-Za-z][A-Za-z0-9_.\-]{0,38}[A-Za-z0-9]:(?:vztmpl|backup)/[A-Za-z0-9][A-Za-z0-9._+\-]{0,200}$")
_SIZE = re.compile(r"^(\+)?([0-9]{1,6})(?:\.([0-9]{1,3}))?([MGT])?$")
_SNAPSHOT = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]{1,39}$")
_GROUP = re.compile(r"^[A-Za-z][A-Za-z0-9_\-]{1,17}$")
_SERVICE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9@._:\-]{0,127}$")
_ABS_PATH = re.compile(r"^/(?:[A-Za-z0-9._+\-]+/?)*$")
_TEMPLATE_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+\-]{0,200}$")
_CONTAINER_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-]{0,127}$")
_PORT_SPEC = re.compile(r"^[0-9]{1,5}(?::[0-9]{1,5})?(?:,[0-9]{1,5}(?::[0-9]{1,5})?)*$")

PROTOCOLS = ("tcp", "udp", "icmp", "icmpv6", "sctp", "esp", "ah", "gre")
DIRECTIONS = ("in", "out")
RULE_ACTIONS = ("ACCEPT", "DROP", "REJECT")
SERVICE_ACTIONS = ("status", "start", "stop", "restart", "reload", "enable")
BACKUP_MODES = ("snapshot", "suspend", "stop")
COMPRESS = {"zstd": "zstd", "gzip": "gzip", "lzo": "lzo", "none": "0"}
FEATURES = ("nesting", "keyctl", "fuse", "mknod", "mount", "force_rw_sys")
APP_ACTIONS = ("install", "uninstall", "start", "stop", "restart", "status")


class Invalid(ValueError):
    """A value refused by an allow-list; the message is safe to return."""


def _text(value: object, field: str) -> str:
    if not isinstance(value, str):
        raise Invalid(f"'{field}' must be a string")
    return value


def _match(value: object, field: str, pattern: re.Pattern[str], rule: str) -> str:
    """`value` as a string that `pattern` matches whole, else 400 "'field' must <rule>"."""
    text = _text(value, field)
    if not pattern.fullmatch(text):
        raise Invalid(f"'{field}' must {rule}")
    return text


def vmid(value: object, field: str = "instance_id") -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    text = _text(value, field)
    if not _DIGITS.fullmatch(text):
        raise Invalid(f"'{field}' must consist of digits only")
    return _in_range(text, field)


def _in_range(digits: str, field: str) -> str:
    """Proxmox VM ids run from 100 to 999999999; 0-99 pass "digits only" but no host accepts them."""
    number = int(digits) if len(digits) <= 12 else VMID_MAX + 1
    if not VMID_MIN <= number <= VMID_MAX:
        raise Invalid(f"'{field}' must be a container id between {VMID_MIN} and {VMID_MAX}")
    return str(number)


def vmids(value: object, field: str = "instance_ids") -> list[str]:
    if not isinstance(value, list) or not value:
        raise Invalid(f"'{field}' must be a non-empty list of digit-only strings")
    if len(value) > MAX_BULK_IDS:
        raise Invalid(f"'{field}' holds at most {MAX_BULK_IDS} ids")
    out: list[str] = []
    for item in value:
        if not isinstance(item, str) or not _DIGITS.fullmatch(item):
            raise Invalid(f"every element of '{field}' must consist of digits only; got {str(item)[:32]!r}")
        vmid = _in_range(item, f"{field}' element '{item[:12]}")
        if vmid not in out:
            out.append(vmid)
    return out


def hostname(value: object, field: str = "hostname") -> str:
    return _match(value, field, _HOSTNAME, "be letters, digits and inner hyphens (at most 50 characters)")


def node(value: object, field: str = "target_host") -> str:
    return _match(value, field, _NODE, "be a cluster node name")


def storage(value: object, field: str = "storage") -> str:
    return _match(value, field, _STORAGE, "be a storage identifier")


def volid(value: object, field: str = "image_id") -> str:
    return _match(
        value, field, _VOLID, "be a template volume id such as local:vztmpl/debian-12-standard_12.7-1_amd64.tar.zst"
    )


def disk_size(value: object, field: str = "storage_size", relative_ok: bool = True) -> str:
    """`64G` (absolute) or `+8G` (relative); a bare number means GiB."""
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    text = _text(value, field).strip()
    m = _SIZE.fullmatch(text)
    if not m or (m.group(1) and not relative_ok):
        raise Invalid(f"'{field}' must look like 64G" + (" or +8G" if relative_ok else ""))
    number = _size_number(m)
    if number <= 0:
        raise Invalid(f"'{field}' must be greater than zero")
    return f"{m.group(1) or ''}{m.group(2)}{'.' + m.group(3) if m.group(3) else ''}{m.group(4) or 'G'}"


def _size_number(m: re.Match[str]) -> float:
    return float(m.group(2) + ("." + m.group(3) if m.group(3) else ""))


def size_in_gib(text: str) -> float:
    m = _SIZE.fullmatch(text)
    assert m is not None
    return _size_number(m) * {"M": 1 / 1024, "G": 1.0, "T": 1024.0}[m.group(4) or "G"]


def snapshot_name(value: object, field: str = "snapshot_name") -> str:
    text = _text(value, field)
    if not _SNAPSHOT.fullmatch(text) or text == "current":
        raise Invalid(f"'{field}' must start with a letter and hold 2-40 letters, digits, '_' or '-'")
    return text


def group_name(value: object, field: str = "group_name") -> str:
    return _match(value, field, _GROUP, "start with a letter and hold 2-18 letters, digits, '_' or '-'")


def service_name(value: object, field: str = "service_name") -> str:
    return _match(value, field, _SERVICE, "be a systemd unit name")


def choice(value: object, field: str, allowed: Iterable[str], upper: bool = False) -> str:
    text = _text(value, field)
    text = text.upper() if upper else text.lower()
    allowed = tuple(allowed)
    if text not in allowed:
        raise Invalid(f"'{field}' must be one of: {', '.join(allowed)}")
    return text


def _ascii_int(value: object) -> object:
    """A string of at most 12 ASCII digits as its int; anything else unchanged (str.isdigit and
    int() also take other scripts' digits, and int() fails past 4,300 digits)."""
    if isinstance(value, str) and len(value) <= 12 and _DIGITS.fullmatch(value):
        return int(value)
    return value


def protocol(value: object, field: str = "protocol") -> str:
    text = _text(value, field).lower()
    if text in PROTOCOLS or (isinstance(number := _ascii_int(text), int) and 0 <= number <= 255):
        return text
    raise Invalid(f"'{field}' must be one of: {', '.join(PROTOCOLS)} (or an IP protocol number)")


def port_spec(value: object, field: str) -> str:
    if isinstance(value, int) and not isinstance(value, bool):
        value = str(value)
    text = _text(value, field)
    if not _PORT_SPEC.fullmatch(text):
        raise Invalid(f"'{field}' must be a port, a range a:b, or a comma-separated list of them")
    for piece in re.split(r"[,:]", text):
        if not 1 <= int(piece) <= 65535:
            raise Invalid(f"'{field}' ports must be between 1 and 65535")
    return text


def port(value: object, field: str = "port") -> int:
    value = _ascii_int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 65535:
        raise Invalid(f"'{field}' must be a port number between 1 and 65535")
    return value


def address_spec(value: object, field: str) -> str:
    """An IP address, a CIDR, or a comma-separated list of them (as PVE accepts)."""
    text = _text(value, field)
    parts = text.split(",")
    if not text or len(parts) > 20:
        raise Invalid(f"'{field}' must be an IP address or CIDR (comma-separated list allowed)")
    for part in parts:
        try:
            if "/" in part:
                ipaddress.ip_network(part, strict=False)
            else:
                ipaddress.ip_address(part)
        except ValueError:
            raise Invalid(f"'{field}' must be an IP address or CIDR; {part[:64]!r} is not") from None
    return text


def ipv4(value: object, field: str) -> str:
    return _address(value, field, 4)


def _address(value: object, field: str, version: int) -> str:
    """An IPv4 or IPv6 address (no prefix), in its canonical form."""
    text = _text(value, field)
    parse = ipaddress.IPv4Address if version == 4 else ipaddress.IPv6Address
    try:
        return str(parse(text))
    except ValueError:
        raise Invalid(f"'{field}' must be an IPv{version} address") from None


def netmask_bits(value: object, field: str = "netmask") -> int:
    value = _ascii_int(value)
    if isinstance(value, str):
        try:
            return ipaddress.IPv4Network(f"0.0.0.0/{value}").prefixlen
        except ValueError:
            pass
    if not isinstance(value, int) or isinstance(value, bool) or not 1 <= value <= 32:
        raise Invalid(f"'{field}' must be a prefix length 1-32 or a dotted netmask")
    return value


def dns_servers(value: object, field: str = "dns") -> str:
    text = _text(value, field)
    servers = [s for s in re.split(r"[\s,]+", text.strip()) if s]
    if not servers or len(servers) > 3:
        raise Invalid(f"'{field}' must list one to three IP addresses")
    for server in servers:
        try:
            ipaddress.ip_address(server)
        except ValueError:
            raise Invalid(f"'{field}' must list IP addresses; {server[:64]!r} is not") from None
    return " ".join(servers)


def features(value: object, field: str = "features") -> str:
    text = _text(value, field)
    items = [i.strip() for i in text.split(",") if i.strip()]
    if not items:
        raise Invalid(f"'{field}' must be a comma-separated list like nesting=1,keyctl=1")
    out = []
    for item in items:
        name, sep, flag = item.partition("=")
        if name not in FEATURES or not sep or flag not in ("0", "1"):
            raise Invalid(f"'{field}' items must be one of {', '.join(FEATURES)} set to 0 or 1")
        out.append(f"{name}={flag}")
    return ",".join(out)


def password(value: object, field: str = "password") -> str:
    text = _text(value, field)
    if not 5 <= len(text) <= 128 or any(ord(c) < 32 or ord(c) == 127 for c in text):
        raise Invalid(f"'{field}' must be 5-128 printable characters")
    return text


def abs_path(value: object, field: str) -> str:
    text = _text(value, field)
    if not _ABS_PATH.fullmatch(text) or "/../" in text + "/" or "/./" in text + "/" or len(text) > 255:
        raise Invalid(f"'{field}' must be an absolute path of letters, digits, '.', '_', '+', '-' and '/'")
    return text.rstrip("/") or "/"


def template_name(value: object, field: str = "template_name") -> str:
    text = _text(value, field)
    if not _TEMPLATE_NAME.fullmatch(text) or ".." in text:
        raise Invalid(f"'{field}' must be a file name of letters, digits, '.', '_', '+' and '-'")
    return text


def container_name(value: object, field: str = "container_name") -> str:
    return _match(value, field, _CONTAINER_NAME, "be a container name")


def positive_int(value: object, field: str, low: int = 1, high: int = 2**31) -> int:
    value = _ascii_int(value)
    if not isinstance(value, int) or isinstance(value, bool) or not low <= value <= high:
        raise Invalid(f"'{field}' must be an integer between {low} and {high}")
    return value


def positive_number(value: object, field: str, low: float = 0.0, high: float = 8192.0) -> str:
    if isinstance(value, str):
        try:
            value = float(value) if "." in value else int(value)
        except ValueError:
            raise Invalid(f"'{field}' must be a number") from None
    if not isinstance(value, (int, float)) or isinstance(value, bool) or not low < value <= high:
        raise Invalid(f"'{field}' must be a number greater than {low:g} and at most {high:g}")
    return f"{value:g}"


def boolean(value: object, field: str) -> bool:
    if isinstance(value, bool):
        return value
    raise Invalid(f"'{field}' must be true or false")


def query_flag(value: str | None, field: str) -> bool:
    """Query strings read `true` as the flag and `false` (or absence) as no flag."""
    if value is None:
        return False
    lowered = value.lower()
    if lowered == "true":
        return True
    if lowered == "false":
        return False
    raise Invalid(f"query parameter '{field}' must be true or false")


def exec_words(value: object, field: str = "command") -> list[str]:
    """A command given as a string (split shell-style) or a list of words.

    Sizes are capped first (EXEC_MAX_CHARS characters in all, EXEC_MAX_WORDS words), then
    any word holding `; & | ` $ ( ) { }` (the spec's set) or `< >`, newlines and NUL is
    refused, so nothing can be read as shell syntax anywhere; the split is linear.
    """
    if isinstance(value, str):
        if len(value) > EXEC_MAX_CHARS:
            raise Invalid(f"'{field}' is longer than {EXEC_MAX_CHARS} characters")
        if not value.strip():
            raise Invalid(f"'{field}' must not be empty")
        bad = _forbidden_in(value)
        if bad:
            raise Invalid(f"'{field}' contains forbidden characters: {bad}")
        words = split_words(value, field)
    elif isinstance(value, list) and value and all(isinstance(w, str) for w in value):
        if len(value) > EXEC_MAX_WORDS or sum(len(w) for w in value) > EXEC_MAX_CHARS:
            raise Invalid(f"'{field}' holds at most {EXEC_MAX_WORDS} words and {EXEC_MAX_CHARS} characters")
        words = list(value)
    else:
        raise Invalid(f"'{field}' must be a string or a non-empty list of strings")
    if len(words) > EXEC_MAX_WORDS:
        raise Invalid(f"'{field}' holds at most {EXEC_MAX_WORDS} words")
    for word in words:
        bad = _forbidden_in(word)
        if bad:
            raise Invalid(f"'{field}' contains forbidden characters: {bad}")
    if not words or not words[0]:
        raise Invalid(f"'{field}' must not be empty")
    return words


_BLANKS = " \t\r\n"
_FORBIDDEN = re.compile("[" + re.escape("".join(sorted(EXEC_FORBIDDEN | EXEC_ALSO_FORBIDDEN))) + "]")
_PIECE = re.compile(r"""[^ \t\r\n'"\\]+|'[^']*'|"(?:[^"\\]|\\.)*"|\\.""", re.DOTALL)
_QUOTED_ESCAPE = re.compile(r"\\(.)", re.DOTALL)


def split_words(text: str, field: str = "command") -> list[str]:
    """Split like `shlex.split` (POSIX mode, no comments) in one linear pass.

    `shlex` builds each token a character at a time (quadratic on a long word) and
    runs on whatever thread calls it; this reads whole runs with one regex instead.
    Quoting: '...' literal; "..." where backslash escapes only `"` and `\\`; a bare
    backslash escapes the next character.
    """
    words: list[str] = []
    pos, end = 0, len(text)
    while pos < end:
        if text[pos] in _BLANKS:
            pos += 1
            continue
        parts: list[str] = []
        while pos < end and text[pos] not in _BLANKS:
            m = _PIECE.match(text, pos)
            if m is None:
                reason = "No escaped character" if text[pos] == "\\" else "No closing quotation"
                raise Invalid(f"'{field}' cannot be split: {reason}")
            parts.append(_unquote(m.group()))
            pos = m.end()
        words.append("".join(parts))
    return words


def _unquote(piece: str) -> str:
    first = piece[0]
    if first == "'":
        return piece[1:-1]
    if first == '"':
        return _QUOTED_ESCAPE.sub(lambda m: m.group(1) if m.group(1) in '"\\' else m.group(0), piece[1:-1])
    if first == "\\":
        return piece[1]
    return piece


def _forbidden_in(text: str) -> str:
    """The forbidden characters `text` holds ("" when none): one C-level scan, a set only on refusal."""
    if not _FORBIDDEN.search(text):
        return ""
    found = sorted({c for c in text if c in EXEC_FORBIDDEN or c in EXEC_ALSO_FORBIDDEN})
    return " ".join(repr(c)[1:-1] for c in found)


def tail(value: str | None) -> str:
    if value is None or value == "all":
        return "all"
    if value.isdigit() and int(value) <= 1_000_000:
        return str(int(value))
    raise Invalid("'tail' must be a non-negative integer or 'all'")


_TAG = re.compile(r"[a-z0-9_][a-z0-9_+.-]{0,63}", re.ASCII)
MOUNT_SLOTS = tuple(f"mp{i}" for i in range(10))
DESCRIPTION_MAX = 8192


def tags(value: object, field: str = "tags") -> str:
    """A list of Proxmox tags (lower-case letters, digits, `_ + . -`), as pct stores them: `a;b`."""
    if not isinstance(value, list) or len(value) > 32:
        raise Invalid(f"'{field}' must be a list of at most 32 tags")
    out: list[str] = []
    for item in value:
        text = _text(item, field)
        if not _TAG.fullmatch(text):
            raise Invalid(f"'{field}' entries must be 1-64 lower-case letters, digits, '_', '+', '.' or '-'")
        if text not in out:
            out.append(text)
    return ";".join(out)


def description(value: object, field: str = "description") -> str:
    """Free text for the container's notes: printable characters, newlines and tabs, 8 KiB at most."""
    text = _text(value, field)
    if len(text.encode()) > DESCRIPTION_MAX or any((ord(c) < 32 and c not in "\n\t") or ord(c) == 127 for c in text):
        raise Invalid(f"'{field}' must be at most {DESCRIPTION_MAX} bytes of printable text (newlines allowed)")
    return text


def startup(order: object, up: object, down: object) -> str:
    """`order=N[,up=S][,down=S]` (pct's startup format) from its parts; an order is required."""
    parts = [f"order={positive_int(order, 'startup_order', 0, 9999)}"]
    if up is not None:
        parts.append(f"up={positive_int(up, 'startup_up', 0, 86400)}")
    if down is not None:
        parts.append(f"down={positive_int(down, 'startup_down', 0, 86400)}")
    return ",".join(parts)


def ipv6_setting(value: object, field: str = "ipv6") -> str:
    """`auto` (SLAAC), `dhcp`, `manual`, or an address with its prefix (`2001:db8::10/64`)."""
    text = _text(value, field)
    if text in ("auto", "dhcp", "manual"):
        return text
    try:
        if "/" not in text:
            raise ValueError(text)
        return str(ipaddress.IPv6Interface(text))
    except ValueError:
        raise Invalid(f"'{field}' must be auto, dhcp, manual or an IPv6 address with its prefix length") from None


def ipv6(value: object, field: str) -> str:
    return _address(value, field, 6)


def mount_slot(value: object, field: str = "slot") -> str:
    text = _text(value, field)
    if text not in MOUNT_SLOTS:
        raise Invalid(f"'{field}' must be one of mp0-mp9")
    return text
