import httpx
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from rayfleet.http import RequestIdMiddleware, client_ip, constant_time_equals, matches_any, parse_networks, request_id

TRUSTED = parse_networks(["10.0.0.0/8", "127.0.0.1"])


def make_request(peer: str, xff: str | None = None) -> Request:
    headers = [(b"x-forwarded-for", xff.encode())] if xff else []
    return Request(
        {"type": "http", "headers": headers, "client": (peer, 1234), "method": "GET", "path": "/", "query_string": b""}
    )


def test_client_ip_is_the_socket_peer_when_untrusted():
    assert client_ip(make_request("203.0.113.9", "1.2.3.4"), TRUSTED) == "203.0.113.9"
    assert client_ip(make_request("203.0.113.9", "1.2.3.4"), []) == "203.0.113.9"


def test_client_cannot_choose_its_address_through_a_trusted_proxy():
    # the client wrote "1.2.3.4"; the trusted proxy appended the real peer
    assert client_ip(make_request("10.1.1.1", "1.2.3.4, 198.51.100.7"), TRUSTED) == "198.51.100.7"
    assert client_ip(make_request("10.1.1.1", "198.51.100.7, 10.2.2.2"), TRUSTED) == "198.51.100.7"
    assert client_ip(make_request("10.1.1.1"), TRUSTED) == "10.1.1.1"
    assert client_ip(make_request("10.1.1.1", "garbage"), TRUSTED) == "10.1.1.1"


def test_constant_time_comparison():
    assert constant_time_equals("abc", "abc")
    assert not constant_time_equals("abc", "abd")
    assert not constant_time_equals("", "")
    assert not constant_time_equals(None, "abc")
    assert matches_any("k2", ["k1", "k2"]) and not matches_any("k3", ["k1", "k2"])


async def _echo(request: Request) -> JSONResponse:
    return JSONResponse({"id": request_id(request)})


async def test_request_id_is_generated_echoed_and_kept_when_well_formed():
    app = RequestIdMiddleware(Starlette(routes=[Route("/", _echo)]), generator=lambda: "req_fixed")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://t") as c:
        r = await c.get("/")
        assert r.json() == {"id": "req_fixed"} and r.headers["x-request-id"] == "req_fixed"
        r = await c.get("/", headers={"X-Request-ID": "abc-123"})
        assert r.json()["id"] == "abc-123" == r.headers["x-request-id"]
        r = await c.get("/", headers={"X-Request-ID": "bad id\twith spaces"})
        assert r.json()["id"] == "req_fixed"


async def test_body_limit_refuses_declared_and_streamed_bodies_in_the_components_shape():
    from fastapi import FastAPI, Request
    from fastapi.responses import JSONResponse

    from rayfleet.http import BodyLimitMiddleware

    app = FastAPI()

    @app.post("/echo")
    async def echo(request: Request) -> dict[str, int]:
        return {"size": len(await request.body())}

    app.add_middleware(
        BodyLimitMiddleware, limit=1000, refuse=lambda limit: JSONResponse({"why": f"over {limit}"}, 413)
    )

    async def chunks():
        for _ in range(5):
            yield b"x" * 300

    async with httpx.AsyncClient(transport=httpx.ASGITransport(app), base_url="http://t") as client:
        small = await client.post("/echo", content=b"x" * 1000)
        declared = await client.post("/echo", content=b"x" * 1001)
        streamed = await client.post("/echo", content=chunks())
    assert small.json() == {"size": 1000}
    assert (declared.status_code, declared.json()) == (413, {"why": "over 1000"})
    assert streamed.status_code == 413
