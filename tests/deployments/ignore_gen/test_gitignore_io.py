"""The gitignore.io-compatible surface: what scripts written against gitignore.io get here."""

from __future__ import annotations

import httpx
import pytest

from deployments.ignore_gen.templates import load_templates
from tests.deployments.ignore_gen.test_app import client_for

ERROR_LINE = "#!! ERROR: {} is undefined. Use list command to see defined gitignore types !!#"


@pytest.fixture
async def client():
    async with client_for() as c:
        yield c


async def test_names_answer_text_plain_sections_in_sorted_order(client: httpx.AsyncClient) -> None:
    r = await client.get("/api/Python,node,python, go")
    assert r.status_code == 200
    assert r.headers["content-type"] == "text/plain; charset=utf-8"
    lines = r.text.splitlines()
    assert lines[0] == "# Created by http://test/api/go,node,python"
    assert lines[-1] == "# End of http://test/api/go,node,python" and r.text.endswith("\n")
    titles = [line for line in lines if line.startswith("### ")]
    assert titles == ["### Go ###", "### Node ###", "### Python ###"]
    templates = load_templates()
    python_body = r.text.split("### Python ###\n", 1)[1]
    assert "__pycache__/" in python_body  # the template's own lines, comments included
    assert templates.texts["python"].splitlines()[0] in python_body


async def test_a_line_already_emitted_is_dropped_from_later_sections_but_comments_stay(client) -> None:
    r = await client.get("/api/python,jupyter")
    lines = r.text.splitlines()
    patterns = [line for line in lines if line and not line.startswith("#")]
    assert len(patterns) == len(set(patterns))
    templates = load_templates()
    shared = set(templates.patterns["jupyter"]) & set(templates.patterns["python"])
    for pattern in shared:  # jupyter sorts first, so the shared lines stay in its section
        jupyter = r.text.split("### Jupyter ###", 1)[1].split("### Python ###", 1)[0]
        assert pattern in jupyter.splitlines()


async def test_an_unknown_name_is_404_with_gitignore_io_error_line_in_place(client) -> None:
    r = await client.get("/api/python,nosuchthing")
    assert r.status_code == 404 and r.headers["content-type"].startswith("text/plain")
    lines = r.text.splitlines()
    assert ERROR_LINE.format("nosuchthing") in lines
    assert lines.index(ERROR_LINE.format("nosuchthing")) < lines.index("### Python ###")  # sorted position
    alone = await client.get("/api/nosuchthing")
    assert alone.status_code == 404 and ERROR_LINE.format("nosuchthing") in alone.text


async def test_gitignore_io_names_map_to_features_once(client) -> None:
    r = await client.get("/api/macos,windows,c++,jupyternotebooks")
    assert r.status_code == 200
    titles = [line for line in r.text.splitlines() if line.startswith("### ")]
    assert titles == ["### Cpp ###", "### Jupyter ###", "### Common ###"]  # in the order of the names asked


@pytest.mark.parametrize("names", ["python%0A*", "python,%0A!src", "py thon", "a" * 70, ",,,"])
async def test_names_that_could_inject_lines_are_refused(client, names) -> None:
    r = await client.get(f"/api/{names}")
    assert r.status_code == 422
    assert set(r.json()) == {"detail"}
    assert "src/" not in r.text.splitlines() and "*" not in r.text.splitlines()


async def test_list_formats(client) -> None:
    text = await client.get("/api/list")
    lines_ = await client.get("/api/list", params={"format": "lines"})
    as_json = await client.get("/api/list", params={"format": "json"})
    bad = await client.get("/api/list", params={"format": "xml"})
    names = lines_.text.splitlines()
    assert names == sorted(names) and {"python", "node", "secrets", "c++", "macos"} <= set(names)
    rows = text.text.splitlines()
    assert all(len(row.split(",")) == 5 for row in rows[:-1]) and 1 <= len(rows[-1].split(",")) <= 5
    assert ",".join(rows).split(",") == names
    body = as_json.json()
    assert sorted(body) == names
    assert body["python"]["key"] == "python" and body["python"]["fileName"] == "Python.gitignore"
    assert "__pycache__/" in body["python"]["contents"]
    assert body["c++"]["contents"] == body["cpp"]["contents"]
    assert bad.status_code == 422


async def test_too_many_names_is_413(client) -> None:
    names = ",".join(f"n{i}" for i in range(300))
    r = await client.get(f"/api/{names}")
    assert r.status_code == 413 and "limit" in r.json()["detail"]
