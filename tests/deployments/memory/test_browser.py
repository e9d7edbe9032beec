"""Real browser preflights against `mem serve` (headless Chromium through Playwright).

- A web page on another loopback origin doing fetch() with `X-MEM-Token` triggers a
  real CORS preflight; the server answers it without CORS headers, so the browser
  blocks the request (and the server never sees the GET).
- A real unpacked extension (chrome-extension:// origin, no host permissions, so
  CORS applies) does the same fetch and succeeds: the preflight carried the
  extension origin and the server allowed it.
"""

from __future__ import annotations

import json
import shutil
import threading
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer

import pytest

from tests.browser import ARGS, CHROMIUM, require_chromium
from tests.deployments.memory.test_rest import Served

FETCH_JS = """async ([url, token]) => {
  try {
    const r = await fetch(url, {headers: {"X-MEM-Token": token}});
    return {ok: true, status: r.status, body: await r.json()};
  } catch (e) {
    return {ok: false, error: String(e)};
  }
}"""


def need_browser():
    require_chromium()


@pytest.fixture
def server(mem_env):
    env = dict(mem_env, MEM_DEBUG="1")  # access log on stderr: proves what reached the server
    served = Served(env, "0")
    import httpx

    httpx.post(
        served.url + "/memories",
        json={"key": "k", "value": "from the browser test"},
        headers={"X-MEM-Token": served.info["token"]},
    ).raise_for_status()
    yield served
    served.stop()


@pytest.fixture
def page_origin(tmp_path):
    root = tmp_path / "site"
    root.mkdir()
    (root / "index.html").write_text("<!doctype html><title>clipper test</title><p>hello</p>")

    class Handler(SimpleHTTPRequestHandler):
        def __init__(self, *a, **kw):
            super().__init__(*a, directory=str(root), **kw)

        def log_message(self, *args):
            return

    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    yield f"http://localhost:{httpd.server_address[1]}"  # another origin than http://127.0.0.1:<mem port>
    httpd.shutdown()
    httpd.server_close()


@pytest.mark.realserver
def test_web_page_preflight_is_refused(server, page_origin):
    need_browser()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        try:
            page = browser.new_page()
            page.goto(page_origin + "/index.html")
            result = page.evaluate(FETCH_JS, [server.url + "/memories/k", server.info["token"]])
        finally:
            browser.close()
    assert result["ok"] is False and "Failed to fetch" in result["error"]
    server.stop()
    log = server.proc.stderr.read()
    assert '"OPTIONS /memories/k HTTP/1.1" 403' in log  # the real preflight, refused
    assert '"GET /memories/k' not in log  # the browser never sent the request itself


@pytest.mark.realserver
def test_extension_origin_preflight_is_allowed(server, tmp_path):
    need_browser()
    from playwright.sync_api import sync_playwright

    ext = tmp_path / "ext"
    ext.mkdir()
    (ext / "manifest.json").write_text(
        json.dumps(
            {
                "manifest_version": 3,
                "name": "mem clipper test",
                "version": "1.0",
                "background": {"service_worker": "sw.js"},
            }
        )
    )  # no host_permissions: CORS applies
    (ext / "sw.js").write_text("self.addEventListener('install', () => self.skipWaiting());")
    (ext / "page.html").write_text("<!doctype html><title>ext page</title>")
    profile = tmp_path / "profile"
    with sync_playwright() as pw:
        context = pw.chromium.launch_persistent_context(
            str(profile),
            executable_path=CHROMIUM,
            headless=True,
            args=[*ARGS, f"--disable-extensions-except={ext}", f"--load-extension={ext}"],
        )
        try:
            workers = context.service_workers or [context.wait_for_event("serviceworker", timeout=15000)]
            ext_id = workers[0].url.split("/")[2]
            page = context.new_page()
            page.goto(f"chrome-extension://{ext_id}/page.html")
            result = page.evaluate(FETCH_JS, [server.url + "/memories/k", server.info["token"]])
        finally:
            context.close()
            shutil.rmtree(profile, ignore_errors=True)
    assert result == {"ok": True, "status": 200, "body": result["body"]}
    assert result["body"]["value"] == "from the browser test"
    server.stop()
    log = server.proc.stderr.read()
    assert '"OPTIONS /memories/k HTTP/1.1" 204' in log and '"GET /memories/k HTTP/1.1" 200' in log
