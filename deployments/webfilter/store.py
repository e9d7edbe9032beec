"""The admin database (SQLite WAL): users, lists, settings, WAF toggles, audit log, metadata.

Every method is synchronous and short; the app calls them off the event loop.
"""

from __future__ import annotations

import hashlib
import json
import secrets
import sqlite3
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from actors.webfilter import waf
from actors.webfilter.grouprules import GroupPolicy
from actors.webfilter.splice import splice_domains
from actors.webfilter.squidconf import Policy
from deployments.webfilter import groups as groups_mod
from deployments.webfilter import settings as settings_mod
from deployments.webfilter.secretbox import SecretBox, is_sealed
from rayfleet.sqlite import connect

SCHEMA = """
CREATE TABLE IF NOT EXISTS users (username TEXT PRIMARY KEY, password_hash TEXT NOT NULL,
    changed INTEGER NOT NULL DEFAULT 0, updated_at REAL NOT NULL);
CREATE TABLE IF NOT EXISTS ip_blacklist (id INTEGER PRIMARY KEY, ip TEXT UNIQUE NOT NULL,
    description TEXT NOT NULL DEFAULT '', added_date TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS domain_blacklist (id INTEGER PRIMARY KEY, domain TEXT UNIQUE NOT NULL,
    description TEXT NOT NULL DEFAULT '', added_date TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS ip_whitelist (id INTEGER PRIMARY KEY, ip TEXT UNIQUE NOT NULL,
    description TEXT NOT NULL DEFAULT '', added_date TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS domain_whitelist (id INTEGER PRIMARY KEY, domain TEXT UNIQUE NOT NULL,
    description TEXT NOT NULL DEFAULT '', added_date TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS tls_splice (id INTEGER PRIMARY KEY, domain TEXT UNIQUE NOT NULL,
    description TEXT NOT NULL DEFAULT '', added_date TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS egress_allowlist (id INTEGER PRIMARY KEY, entry TEXT UNIQUE NOT NULL,
    type TEXT NOT NULL, description TEXT NOT NULL DEFAULT '', added_date TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS settings (name TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS waf_categories (name TEXT PRIMARY KEY, enabled INTEGER NOT NULL);
CREATE TABLE IF NOT EXISTS audit_log (id INTEGER PRIMARY KEY, timestamp TEXT NOT NULL, username TEXT,
    client_ip TEXT, action TEXT NOT NULL, detail TEXT NOT NULL DEFAULT '');
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS client_groups (id INTEGER PRIMARY KEY, name TEXT UNIQUE NOT NULL,
    description TEXT NOT NULL DEFAULT '', policy TEXT NOT NULL, created TEXT NOT NULL, updated TEXT NOT NULL);
"""

EXPORTED_TABLES = (
    "users",
    "ip_blacklist",
    "domain_blacklist",
    "ip_whitelist",
    "domain_whitelist",
    "egress_allowlist",
    "tls_splice",
    "settings",
    "waf_categories",
    "audit_log",
    "meta",
    "client_groups",
)


@dataclass(frozen=True)
class ListSpec:
    table: str
    column: str
    kind: str  # ip | domain | egress


LISTS: dict[str, ListSpec] = {
    "ip-blacklist": ListSpec("ip_blacklist", "ip", "ip"),
    "domain-blacklist": ListSpec("domain_blacklist", "domain", "domain"),
    "ip-whitelist": ListSpec("ip_whitelist", "ip", "ip"),
    "domain-whitelist": ListSpec("domain_whitelist", "domain", "domain"),
    "egress-allowlist": ListSpec("egress_allowlist", "entry", "egress"),
    "tls-splice": ListSpec("tls_splice", "domain", "domain"),  # passed through unbumped (TLS interception)
}


class GroupConflict(Exception):
    """A group that cannot be stored: `status` 404 (unknown id), 409 (name taken), 422 (shared address)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status


def utc_now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def hash_password(password: str, salt: bytes | None = None) -> str:
    salt = salt or secrets.token_bytes(16)
    digest = hashlib.scrypt(password.encode(), salt=salt, n=2**14, r=8, p=1)
    return f"scrypt${salt.hex()}${digest.hex()}"


def verify_password(password: str, stored: str) -> bool:
    try:
        _, salt, digest = stored.split("$")
    except ValueError:
        return False
    return secrets.compare_digest(hash_password(password, bytes.fromhex(salt)).split("$")[2], digest)


class Store:
    def __init__(self, path: Path, box: SecretBox) -> None:
        self.path = Path(path)
        self.box: SecretBox | None = box
        self._local = threading.local()
        with self._conn() as conn:
            conn.executescript(SCHEMA)
            for cat in waf.CATEGORIES:
                conn.execute("INSERT OR IGNORE INTO waf_categories VALUES (?, 1)", (cat,))
            conn.execute("INSERT OR IGNORE INTO meta VALUES ('jwt_secret', ?)", (secrets.token_hex(32),))
            # secret settings written in clear by an earlier version are encrypted in place
            clear = [
                (name, settings_mod.decode(value))
                for name, value in conn.execute("SELECT name, value FROM settings")
                if name in settings_mod.SETTINGS and settings_mod.SETTINGS[name].secret and not is_sealed(value)
            ]
            conn.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)", self._rows(dict(clear)))

    @classmethod
    def reader(cls, path: Path) -> Store:
        """A store over an existing database that only reads the policy (`versioned_policy`): no schema
        change, no secret key (secret settings stay sealed)."""
        store = cls.__new__(cls)
        store.path, store.box, store._local = Path(path), None, threading.local()
        return store

    def _sealer(self) -> SecretBox:
        if self.box is None:
            raise RuntimeError("this store reads the policy only: it has no secret key")
        return self.box

    def _conn(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            conn = self._local.conn = connect(self.path)
        return conn

    # users -------------------------------------------------------------------------------------------
    def ensure_admin(self, username: str, password: str) -> None:
        """Create the admin with the configured (generated) password; until the admin changes it, the
        configured password stays the one that works (regenerated demo secrets are picked up)."""
        row = self.user(username)
        if row is not None and (row["changed"] or verify_password(password, row["password_hash"])):
            return
        with self._conn() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO users VALUES (?, ?, 0, ?)", (username, hash_password(password), time.time())
            )

    def user(self, username: str) -> sqlite3.Row | None:
        row: sqlite3.Row | None = self._conn().execute("SELECT * FROM users WHERE username = ?", (username,)).fetchone()
        return row

    def set_password(self, username: str, password: str) -> None:
        with self._conn() as conn:
            conn.execute(
                "UPDATE users SET password_hash = ?, changed = 1, updated_at = ? WHERE username = ?",
                (hash_password(password), time.time(), username),
            )

    def meta(self, key: str, default: str = "") -> str:
        row = self._conn().execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return str(row[0]) if row else default

    def set_meta(self, key: str, value: str) -> None:
        with self._conn() as conn:
            conn.execute("INSERT OR REPLACE INTO meta VALUES (?, ?)", (key, value))

    # lists -------------------------------------------------------------------------------------------
    def list_entries(
        self, spec: ListSpec, limit: int, offset: int, search: str | None
    ) -> tuple[list[dict[str, Any]], int]:
        where, args = "", []
        if search:
            where, args = f"WHERE {spec.column} LIKE ?", [f"%{search}%"]
        conn = self._conn()
        total = conn.execute(f"SELECT COUNT(*) FROM {spec.table} {where}", args).fetchone()[0]
        rows = conn.execute(
            f"SELECT * FROM {spec.table} {where} ORDER BY id LIMIT ? OFFSET ?", [*args, limit, offset]
        ).fetchall()
        return [dict(r) for r in rows], int(total)

    def add_entry(self, spec: ListSpec, value: str, description: str, kind: str | None = None) -> dict[str, Any] | None:
        """The new row, or None when the value is already listed."""
        with self._conn() as conn:
            if spec.kind == "egress":
                cur = conn.execute(
                    f"INSERT OR IGNORE INTO {spec.table} (entry, type, description, added_date) VALUES (?, ?, ?, ?)",
                    (value, kind, description, utc_now()),
                )
            else:
                cur = conn.execute(
                    f"INSERT OR IGNORE INTO {spec.table} ({spec.column}, description, added_date) VALUES (?, ?, ?)",
                    (value, description, utc_now()),
                )
            if cur.rowcount == 0:
                return None
            return dict(conn.execute(f"SELECT * FROM {spec.table} WHERE id = ?", (cur.lastrowid,)).fetchone())

    def add_many(self, spec: ListSpec, values: list[str], description: str) -> int:
        now = utc_now()
        with self._conn() as conn:
            before = conn.total_changes
            for start in range(0, len(values), 5000):
                conn.executemany(
                    f"INSERT OR IGNORE INTO {spec.table} ({spec.column}, description, added_date) VALUES (?, ?, ?)",
                    [(v, description, now) for v in values[start : start + 5000]],
                )
            return conn.total_changes - before

    def delete_entries(self, spec: ListSpec, ids: list[int]) -> int:
        with self._conn() as conn:
            cur = conn.executemany(f"DELETE FROM {spec.table} WHERE id = ?", [(i,) for i in ids])
            return cur.rowcount

    def clear(self, spec: ListSpec) -> int:
        with self._conn() as conn:
            return conn.execute(f"DELETE FROM {spec.table}").rowcount

    def values(self, spec: ListSpec) -> list[str]:
        return [r[0] for r in self._conn().execute(f"SELECT {spec.column} FROM {spec.table}")]

    def count(self, spec: ListSpec) -> int:
        return int(self._conn().execute(f"SELECT COUNT(*) FROM {spec.table}").fetchone()[0])

    # settings ----------------------------------------------------------------------------------------
    def _rows(self, values: dict[str, Any]) -> list[tuple[str, str]]:
        """(name, stored text): JSON, and a non-empty secret sealed (`enc::...`, AES-256-GCM)."""
        secret = {k for k, v in values.items() if v and settings_mod.SETTINGS[k].secret}
        return [
            (k, self._sealer().seal(k, settings_mod.encode(v)) if k in secret else settings_mod.encode(v))
            for k, v in values.items()
        ]

    def settings(self, reveal: bool = False) -> dict[str, Any]:
        """Every setting; a set secret reads `MASK` unless `reveal` (then it is decrypted, and a value the
        current key does not open raises `SecretUnreadable`)."""
        values = {name: s.default for name, s in settings_mod.SETTINGS.items()}
        for name, value in self._conn().execute("SELECT name, value FROM settings"):
            if name not in values:
                continue
            if is_sealed(value):
                values[name] = settings_mod.decode(self._sealer().open(name, value)) if reveal else settings_mod.MASK
            else:
                values[name] = settings_mod.decode(value)
        return values

    def put_settings(self, values: dict[str, Any]) -> None:
        """All or nothing: one transaction."""
        with self._conn() as conn:
            conn.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)", self._rows(values))

    def waf_categories(self) -> dict[str, bool]:
        rows = self._conn().execute("SELECT name, enabled FROM waf_categories").fetchall()
        return {r[0]: bool(r[1]) for r in rows if r[0] in waf.CATEGORIES}

    def set_waf_category(self, name: str, enabled: bool) -> None:
        with self._conn() as conn:
            conn.execute("UPDATE waf_categories SET enabled = ? WHERE name = ?", (int(enabled), name))

    # policy ------------------------------------------------------------------------------------------
    def effective_policy(self) -> Policy:
        cfg = self.settings()
        egress = self._conn().execute("SELECT entry, type FROM egress_allowlist").fetchall()
        return Policy(
            domain_blacklist=self.values(LISTS["domain-blacklist"]),
            ip_blacklist=self.values(LISTS["ip-blacklist"]),
            domain_whitelist=self.values(LISTS["domain-whitelist"]),
            ip_whitelist=self.values(LISTS["ip-whitelist"]),
            egress_domains=[e for e, t in egress if t == "domain"],
            egress_ips=[e for e, t in egress if t == "cidr"],
            blocked_sources=list(cfg["blocked_sources"]),
            allowed_networks=list(cfg["allowed_networks"]),
            enable_domain_blacklist=cfg["enable_domain_blacklist"],
            enable_ip_blacklist=cfg["enable_ip_blacklist"],
            block_direct_ip=cfg["block_direct_ip"],
            egress_default_deny=cfg["egress_default_deny"],
            enable_waf=cfg["enable_waf"],
            waf_engine=cfg["waf_engine"],
            waf_paranoia_level=cfg["waf_paranoia_level"],
            waf_anomaly_threshold=cfg["waf_anomaly_threshold"],
            waf_exclusions=list(cfg["waf_exclusions"]),
            ssl_bump=cfg["ssl_bump_enabled"],
            proxy_listen=list(cfg["proxy_listen"]),
            dns_listen=list(cfg["dns_listen"]),
            dns_upstreams=list(cfg["dns_upstreams"]),
            dns_upstream_ca_file=cfg["dns_upstream_ca_file"],
            dns_block_mode=cfg["dns_block_mode"],
            waf_categories=[name for name, on in self.waf_categories().items() if on],
            groups=[_group_policy(g) for g in self.groups()],
            tls_splice=[*self.values(LISTS["tls-splice"]), *splice_domains(cfg["tls_splice_categories"])],
        )

    def bump_policy_version(self) -> int:
        """Mark the policy changed (after the change is committed): the new version, which the proxy actor
        compares with the version of the policy it last read (`ProxyOwner.sync`)."""
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO meta VALUES ('policy_version', '1') "
                "ON CONFLICT(key) DO UPDATE SET value = CAST(value AS INTEGER) + 1"
            )
            return int(conn.execute("SELECT value FROM meta WHERE key = 'policy_version'").fetchone()[0])

    def versioned_policy(self) -> tuple[int, Policy]:
        """The policy and its version, read in one transaction (one snapshot of the database)."""
        conn = self._conn()
        conn.execute("BEGIN")
        try:
            return int(self.meta("policy_version", "0")), self.effective_policy()
        finally:
            conn.execute("COMMIT")

    # client groups ------------------------------------------------------------------------------------
    def groups(self) -> list[dict[str, Any]]:
        """Every group, in the order its rules apply (creation)."""
        rows = self._conn().execute("SELECT * FROM client_groups ORDER BY id").fetchall()
        return [
            {**{k: r[k] for k in ("id", "name", "description", "created", "updated")}, **json.loads(r["policy"])}
            for r in rows
        ]

    def save_group(self, key: int | None, group: GroupPolicy, description: str) -> dict[str, Any]:
        """Create (`key` None) or replace a group, checked against the others in the same write transaction
        (two replicas cannot both store overlapping groups). GroupConflict when it cannot be stored."""
        conn = self._conn()
        with conn:
            conn.execute("BEGIN IMMEDIATE")
            current = self.groups()
            if key is not None and all(g["id"] != key for g in current):
                raise GroupConflict(404, f"no client group with id {key}")
            others = [g for g in current if g["id"] != key]
            if any(g["name"] == group["name"] for g in others):
                raise GroupConflict(409, f"a client group named {group['name']} exists")
            clash = groups_mod.clashes(group["networks"], others)
            if clash is not None:
                raise GroupConflict(422, f"networks: {clash}: a client belongs to one group at most")
            body = _group_json(group)
            now = utc_now()
            if key is None:
                cur = conn.execute(
                    "INSERT INTO client_groups (name, description, policy, created, updated) VALUES (?, ?, ?, ?, ?)",
                    (group["name"], description, body, now, now),
                )
                key = int(cur.lastrowid or 0)
            else:
                conn.execute(
                    "UPDATE client_groups SET name = ?, description = ?, policy = ?, updated = ? WHERE id = ?",
                    (group["name"], description, body, now, key),
                )
        return next(g for g in self.groups() if g["id"] == key)

    def delete_group(self, key: int) -> dict[str, Any] | None:
        """The deleted group, or None when unknown."""
        with self._conn() as conn:
            found = next((g for g in self.groups() if g["id"] == key), None)
            conn.execute("DELETE FROM client_groups WHERE id = ?", (key,))
        return found

    def effective_state(self) -> dict[str, Any]:
        cfg = self.settings()
        admin_changed = self._conn().execute("SELECT MAX(changed) FROM users").fetchone()[0]
        targets = [k for k in settings_mod.SETTINGS if k.endswith("_url") or k == "notify_syslog_address"]
        return {
            **cfg,
            "domain_blacklist_count": self.count(LISTS["domain-blacklist"]),
            "ip_blacklist_count": self.count(LISTS["ip-blacklist"]),
            "waf_enabled_categories": sum(self.waf_categories().values()),
            "password_changed": bool(admin_changed),
            "notification_targets": sum(1 for k in targets if cfg[k]),
        }

    # audit and maintenance ---------------------------------------------------------------------------
    def audit(self, username: str | None, client_ip: str, action: str, detail: str = "") -> None:
        with self._conn() as conn:
            conn.execute(
                "INSERT INTO audit_log (timestamp, username, client_ip, action, detail) VALUES (?, ?, ?, ?, ?)",
                (utc_now(), username, client_ip, action, detail[:1000]),
            )

    def audit_log(self, limit: int, offset: int) -> tuple[list[dict[str, Any]], int]:
        conn = self._conn()
        total = conn.execute("SELECT COUNT(*) FROM audit_log").fetchone()[0]
        rows = conn.execute("SELECT * FROM audit_log ORDER BY id DESC LIMIT ? OFFSET ?", (limit, offset)).fetchall()
        return [dict(r) for r in rows], int(total)

    def table_counts(self) -> dict[str, int]:
        conn = self._conn()
        return {t: int(conn.execute(f"SELECT COUNT(*) FROM {t}").fetchone()[0]) for t in EXPORTED_TABLES}

    def size_bytes(self) -> int:
        return sum(p.stat().st_size for p in self.path.parent.glob(self.path.name + "*") if p.is_file())

    def export(self) -> dict[str, list[dict[str, Any]]]:
        """Every table; password hashes, the JWT secret and secret settings redacted."""
        conn = self._conn()
        out: dict[str, list[dict[str, Any]]] = {}
        secret_settings = {k for k, s in settings_mod.SETTINGS.items() if s.secret}
        for table in EXPORTED_TABLES:
            rows = [dict(r) for r in conn.execute(f"SELECT * FROM {table}")]
            for row in rows:
                if "password_hash" in row:
                    row["password_hash"] = "[redacted]"
                if table == "meta" and row["key"] == "jwt_secret":
                    row["value"] = "[redacted]"
                if table == "settings" and row["name"] in secret_settings and row["value"] != '""':
                    row["value"] = "[redacted]"
            out[table] = rows
        return out

    def optimize(self) -> None:
        conn = self._conn()
        conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        conn.execute("VACUUM")
        conn.execute("REINDEX")
        conn.execute("PRAGMA optimize")

    def reset(self) -> dict[str, int]:
        """Empty every table but users (and the JWT secret, so sessions survive)."""
        cleared = {}
        with self._conn() as conn:
            for table in EXPORTED_TABLES:
                if table == "users":
                    continue
                if table == "meta":
                    # the policy version only grows: the proxy actor skips versions it has read
                    kept = "('jwt_secret', 'policy_version')"
                    cleared[table] = conn.execute(f"DELETE FROM meta WHERE key NOT IN {kept}").rowcount
                    continue
                cleared[table] = conn.execute(f"DELETE FROM {table}").rowcount
            for cat in waf.CATEGORIES:
                conn.execute("INSERT OR IGNORE INTO waf_categories VALUES (?, 1)", (cat,))
        return cleared

    def backup(self) -> dict[str, Any]:
        """Settings (secrets masked), WAF toggles and every list."""
        conn = self._conn()
        lists = {}
        for name, spec in LISTS.items():
            cols = "entry, type, description" if spec.kind == "egress" else f"{spec.column}, description"
            lists[name] = [dict(r) for r in conn.execute(f"SELECT {cols} FROM {spec.table} ORDER BY id")]
        return {
            "version": 1,
            "settings": settings_mod.redacted(self.settings()),
            "waf_categories": self.waf_categories(),
            "lists": lists,
            "groups": [{k: g[k] for k in GROUP_FIELDS} for g in self.groups()],
        }

    def restore(self, config: dict[str, Any]) -> dict[str, int]:
        """Validate everything, then replace settings, WAF toggles and lists in one transaction.
        Masked secrets keep their current value. Raises ValueError (nothing written) on any bad value."""
        raw_settings = config.get("settings", {})
        if not isinstance(raw_settings, dict):
            raise ValueError("settings must be an object")
        values = {k: settings_mod.parse_setting(k, v) for k, v in raw_settings.items() if v != settings_mod.MASK}
        cats = config.get("waf_categories", {})
        if not isinstance(cats, dict) or not set(cats) <= set(waf.CATEGORIES):
            raise ValueError("waf_categories must map known categories to booleans")
        if not all(isinstance(enabled, bool) for enabled in cats.values()):
            raise ValueError("waf_categories values must be booleans (true or false)")
        lists = config.get("lists", {})
        if not isinstance(lists, dict) or not set(lists) <= set(LISTS):
            raise ValueError("lists must map list names to entries")
        rows = {name: _restored_rows(name, entries) for name, entries in lists.items()}
        groups = groups_mod.restored(config["groups"]) if "groups" in config else None
        now = utc_now()
        with self._conn() as conn:
            if groups is not None:  # a backup from before groups leaves them as they are
                conn.execute("DELETE FROM client_groups")
                conn.executemany(
                    "INSERT INTO client_groups (name, description, policy, created, updated) VALUES (?, ?, ?, ?, ?)",
                    [(g["name"], description, _group_json(g), now, now) for g, description in groups],
                )
            conn.executemany("INSERT OR REPLACE INTO settings VALUES (?, ?)", self._rows(values))
            for cat, enabled in cats.items():
                conn.execute("UPDATE waf_categories SET enabled = ? WHERE name = ?", (int(bool(enabled)), cat))
            for name, out in rows.items():
                spec = LISTS[name]
                conn.execute(f"DELETE FROM {spec.table}")
                if spec.kind == "egress":
                    conn.executemany(
                        f"INSERT OR IGNORE INTO {spec.table} (entry, type, description, added_date) VALUES (?,?,?,?)",
                        [(*r, now) for r in out],
                    )
                else:
                    conn.executemany(
                        f"INSERT OR IGNORE INTO {spec.table} ({spec.column}, description, added_date) VALUES (?,?,?)",
                        [(*r, now) for r in out],
                    )
        restored = {"settings": len(values), "waf_categories": len(cats), **{k: len(v) for k, v in rows.items()}}
        return restored if groups is None else {**restored, "groups": len(groups)}


GROUP_FIELDS = ("name", "description", "networks", "blacklist", "whitelist", "windows")


def _group_json(group: GroupPolicy) -> str:
    return json.dumps({k: v for k, v in group.items() if k != "name"})


def _group_policy(row: dict[str, Any]) -> GroupPolicy:
    return {
        "name": row["name"],
        "networks": row["networks"],
        "blacklist": row["blacklist"],
        "whitelist": row["whitelist"],
        "windows": row["windows"],
    }


def _restored_rows(name: str, entries: Any) -> list[tuple[str, ...]]:
    """The rows of list `name` from a backup, each checked as a POST of it would be (the same body model,
    the same canonical entry), and a duplicate refused as a POST refuses it (409 there). ValueError on the
    first bad entry."""
    from pydantic import ValidationError

    from actors.webfilter.entries import EntryError, classify, domain_rule, ip_entry
    from deployments.webfilter.schemas import DomainBody, EgressBody, IpBody

    spec = LISTS[name]
    if not isinstance(entries, list):
        raise ValueError(f"{name} must be a list of entries")
    out: list[tuple[str, ...]] = []
    seen: set[str] = set()
    for item in entries:
        try:
            if spec.kind == "egress":  # a backup row also names its type, which the entry decides again
                plain = {k: v for k, v in item.items() if k != "type"} if isinstance(item, dict) else item
                egress = EgressBody.model_validate(plain)
                kind, value = classify(egress.entry)
                row: tuple[str, ...] = (value, kind, egress.description)
            elif spec.kind == "ip":
                body = IpBody.model_validate(item)
                value = ip_entry(body.ip)
                row = (value, body.description)
            else:
                domain = DomainBody.model_validate(item)
                value = domain_rule(domain.domain)
                row = (value, domain.description)
        except ValidationError as exc:
            problem = exc.errors()[0]
            where = ".".join(str(p) for p in problem["loc"])
            raise ValueError(f"bad {name} entry ({where}: {problem['msg']})") from None
        except EntryError as exc:
            raise ValueError(f"bad {name} entry: {exc}") from None
        if value in seen:
            raise ValueError(f"{value} is twice on the {name}")
        seen.add(value)
        out.append(row)
    return out
