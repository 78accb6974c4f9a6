"""The HTML viewer in a real browser (Debian's Chromium, driven by Playwright): the page
renders without console errors or requests, shows both graphs with native units
highlighted, folds a scope when its label is clicked, and shows a node's line, types,
source and scope on hover."""

from __future__ import annotations

import pytest

from irjit.tools.irtool import main

from .support import require, require_module, traced_fixture

CHROMIUM_FLAGS = ["--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                  "--disable-background-networking", "--disable-component-update",
                  "--disable-sync"]


@pytest.fixture(scope="module")
def page_file(tmp_path_factory):
    """`irtool view` of PyTorch's traced Sequential (scopes two deep, source lines), before
    and after the native partition."""
    require("dot")
    folder = tmp_path_factory.mktemp("view")
    graph = folder / "net_sequential.ir"
    graph.write_text(traced_fixture("Net"))
    page = folder / "page.html"
    assert main(["view", str(graph), "--passes=propagate_input_shapes,native_partition",
                 "-o", str(page)]) == 0
    return page


@pytest.fixture(scope="module")
def browser_page(page_file, tmp_path_factory):
    chromium = require("chromium")
    sync_api = require_module("playwright.sync_api")
    errors, requests = [], []
    with sync_api.sync_playwright() as p:
        context = p.chromium.launch_persistent_context(
            str(tmp_path_factory.mktemp("profile")), executable_path=chromium, headless=True,
            args=CHROMIUM_FLAGS, viewport={"width": 1400, "height": 900})
        page = context.new_page()
        page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
        page.on("pageerror", lambda e: errors.append(str(e)))
        page.on("request", lambda r: requests.append(r.url))
        page.goto(page_file.as_uri())
        page.wait_for_selector("body[data-ready='1']", timeout=10_000)
        yield page, errors, requests
        context.close()


def test_page_renders_without_errors_or_requests(browser_page, page_file):
    page, errors, requests = browser_page
    assert errors == []
    assert requests == [page_file.as_uri()]  # the page itself, nothing else
    assert page.locator("section.pane").count() == 2
    assert page.locator("#pane-a h2").inner_text() == "before"
    assert page.locator("#pane-b h2").inner_text().startswith("after propagate_input_shapes")
    assert page.locator("#pane-a svg g.irn").count() >= 8
    text = page.content()
    assert "http://" not in text.replace("http://www.w3.org/", "")  # no links out (SVG ns aside)


def test_native_units_are_highlighted(browser_page):
    page, _, _ = browser_page
    native = page.locator("#pane-b g.irc.role-native")
    assert native.count() >= 1
    fill = native.first.locator("path, polygon").first.get_attribute("fill")
    assert fill == "#e6f4ea"
    assert "native unit" in page.locator("#pane-b .sum").inner_text()
    assert page.locator("#pane-a g.irc.role-native").count() == 0


def test_folding_a_scope_hides_its_nodes_and_unfolding_shows_them(browser_page):
    page, errors, _ = browser_page
    cluster = page.locator("#pane-a g.irc", has_text="seq (Sequential)").first
    cluster_id = cluster.get_attribute("id")
    inside = page.locator(f"#pane-a g.irn.in-{cluster_id}")
    assert inside.count() >= 4 and inside.first.is_visible()
    outside = page.locator("#pane-a g.irn:not(.in-" + cluster_id + ")").first
    cluster.locator("text").first.click()
    assert "folded" in cluster.get_attribute("class")
    assert all(not inside.nth(i).is_visible() for i in range(inside.count()))
    assert page.locator(f"#pane-a g.irc.in-{cluster_id}").first.is_hidden()  # nested scopes
    assert outside.is_visible()
    assert "folded:" in cluster.locator("text.fold-note").text_content()
    cluster.locator("text").first.click()
    assert "folded" not in cluster.get_attribute("class")
    assert all(inside.nth(i).is_visible() for i in range(inside.count()))
    assert cluster.locator("text.fold-note").count() == 0
    assert errors == []


def test_hover_shows_line_types_source_and_scope(browser_page):
    page, errors, _ = browser_page
    page.locator("#pane-a button[data-act=unfold]").click()
    relu = page.locator("#pane-a g.irn", has_text="relu").first
    relu.hover()
    tip = page.locator("#tip")
    assert tip.is_visible()
    text = tip.inner_text()
    assert "aten::relu(%input.1)" in text
    assert "%input : Float(2, 5, strides=[5, 1], requires_grad=1, device=cpu)" in text
    assert "# /usr/local/lib/python3.11/site-packages/torch/nn/functional.py:1771:0" in text
    assert "scope: __module.seq/__module.seq.1" in text
    # the same source line lights up in the other pane too
    assert page.locator("#pane-b g.irn.linked").count() >= 1
    page.mouse.move(0, 0)
    assert tip.is_hidden()
    assert errors == []
