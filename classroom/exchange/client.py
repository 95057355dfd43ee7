"""nbgrader's exchange plugins for a student's server on the class hub: the Assignments panel's
Fetch, Submit and Fetch Feedback call the exchange service over HTTP with the token the hub gave
this server, instead of copying files through a shared folder.

Selected in the image's ``nbgrader_config.py`` when ``JAXCOURSE_EXCHANGE_URL`` is set (the hub's
spawner sets it). What these classes return has the shape nbgrader's own exchange returns, so the
panel shows them unchanged.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

from nbgrader.exchange import abc

from classroom import environment, internal_tls

SKIP = {"feedback", ".ipynb_checkpoints", "__pycache__"}
TIMEOUT = 60.0


class _Remote(abc.Exchange):  # type: ignore[misc]  # nbgrader is untyped
    """The service's address and this server's hub token, from the environment."""

    def init_src(self) -> None:
        pass

    def init_dest(self) -> None:
        pass

    def copy_files(self) -> None:
        pass

    def call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        url = os.environ.get(environment.EXCHANGE_URL, "").rstrip("/") + "/api/" + path
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(
            url,
            data=data,
            method=method,
            headers={
                "Authorization": f"token {os.environ.get('JUPYTERHUB_API_TOKEN', '')}",
                "Content-Type": "application/json",
            },
        )
        try:
            with urllib.request.urlopen(request, timeout=TIMEOUT, context=internal_tls.client_context(url)) as response:
                return json.loads(response.read())
        except urllib.error.HTTPError as err:
            self.fail(_error(err))
        except (urllib.error.URLError, OSError, internal_tls.InternalTLSError) as err:
            self.fail(f"the class exchange at {url} does not answer ({err}); try again, or tell your instructor")

    @property
    def course(self) -> str:
        course: str = self.coursedir.course_id or "jax-distributed"
        return course

    def local(self, assignment: str) -> Path:
        return Path(self.assignment_dir).resolve() / assignment

    def wanted(self, assignment: str) -> bool:
        asked = self.coursedir.assignment_id
        return not asked or asked == "*" or asked == assignment


def _error(err: urllib.error.HTTPError) -> str:
    try:
        return str(json.loads(err.read())["error"])
    except (ValueError, KeyError, TypeError):
        return f"the class exchange answered {err.code} {err.reason}"


class ExchangeList(_Remote, abc.ExchangeList):  # type: ignore[misc]
    def start(self) -> list[dict[str, Any]]:
        if self.inbound:
            self.fail("on the class hub, instructors collect submissions with `jaxcourse collect`")
        if self.remove:
            self.fail("released assignments are removed by the instructor, not from a student's server")
        listing = self.call("GET", "assignments")
        return self._submitted(listing) if self.cached else self._released(listing)

    def _released(self, listing: dict[str, Any]) -> list[dict[str, Any]]:
        found = []
        for entry in listing["released"]:
            name = entry["assignment"]
            if not self.wanted(name):
                continue
            local = self.local(name)
            fetched = local.is_dir()
            notebooks = sorted(local.glob("*.ipynb")) if fetched else [Path(n) for n in entry["files"]]
            found.append(
                {
                    "course_id": self.course,
                    "assignment_id": name,
                    "status": "fetched" if fetched else "released",
                    "path": str(local) if fetched else f"exchange:{name}",
                    "notebooks": [
                        {"notebook_id": p.stem, "path": str(local / p.name)} for p in notebooks if p.suffix == ".ipynb"
                    ],
                }
            )
        return found

    def _submitted(self, listing: dict[str, Any]) -> list[dict[str, Any]]:
        grouped: dict[str, list[dict[str, Any]]] = {}
        for sub in listing["submissions"]:
            if self.wanted(sub["assignment"]):
                grouped.setdefault(sub["assignment"], []).append(self._submission(listing["student"], sub))
        return [
            {
                "course_id": self.course,
                "student_id": listing["student"],
                "assignment_id": name,
                "status": "submitted",
                "submissions": sorted(subs, key=lambda s: s["timestamp"]),
            }
            for name, subs in sorted(grouped.items())
        ]

    def _submission(self, student: str, sub: dict[str, Any]) -> dict[str, Any]:
        folder = self.local(sub["assignment"]) / "feedback" / sub["timestamp"]
        notebooks = []
        for notebook in sub["notebooks"]:
            page = folder / f"{notebook}.html"
            remote = sub["feedback"].get(notebook)
            local = hashlib.md5(page.read_bytes()).hexdigest() if page.is_file() else None
            notebooks.append(
                {
                    "notebook_id": notebook,
                    "path": str(self.local(sub["assignment"]) / f"{notebook}.ipynb"),
                    "has_local_feedback": local is not None,
                    "has_exchange_feedback": remote is not None,
                    "local_feedback_path": str(page) if local else None,
                    "feedback_updated": local is not None and remote is not None and local != remote,
                }
            )
        has_local = bool(notebooks) and all(n["has_local_feedback"] for n in notebooks)
        return {
            "course_id": self.course,
            "student_id": student,
            "assignment_id": sub["assignment"],
            "timestamp": sub["timestamp"],
            "status": "submitted",
            "path": f"exchange:{sub['assignment']}",
            "notebooks": notebooks,
            "has_local_feedback": has_local,
            "has_exchange_feedback": bool(notebooks) and all(n["has_exchange_feedback"] for n in notebooks),
            "feedback_updated": any(n["feedback_updated"] for n in notebooks),
            "local_feedback_path": str(folder) if has_local else None,
        }


class ExchangeFetchAssignment(_Remote, abc.ExchangeFetchAssignment):  # type: ignore[misc]
    def start(self) -> None:
        name = self.coursedir.assignment_id
        dest = self.local(name)
        if dest.is_dir() and not self.replace_missing_files:
            self.fail(f"You already have a copy of the assignment in {dest}: rename or remove it to fetch again")
        files = self.call("GET", f"assignments/{name}/files")["files"]
        for relative, data in files.items():
            target = dest / relative
            if target.exists():
                continue  # replace_missing_files: only what is missing
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_bytes(base64.b64decode(data))
        self.log.info("Fetched %s into %s", name, dest)


class ExchangeSubmit(_Remote, abc.ExchangeSubmit):  # type: ignore[misc]
    def start(self) -> None:
        name = self.coursedir.assignment_id
        source = self.local(name)
        if not source.is_dir():
            self.fail(f"Assignment not found at {source}: fetch {name} first")
        files = {
            p.relative_to(source).as_posix(): base64.b64encode(p.read_bytes()).decode()
            for p in sorted(source.rglob("*"))
            if p.is_file()
            and not SKIP.intersection(p.relative_to(source).parts)
            and not any(part.startswith(".") for part in p.relative_to(source).parts)
        }
        if self.strict:
            released = {
                Path(n).name for n in self.call("GET", f"assignments/{name}/files")["files"] if n.endswith(".ipynb")
            }
            missing = released - {Path(n).name for n in files}
            if missing:
                self.fail(f"not submitted: {', '.join(sorted(missing))} missing from {source}")
        done = self.call("POST", f"assignments/{name}/submissions", {"files": files})
        self.timestamp = done["timestamp"]
        self.log.info("Submitted %s at %s", name, self.timestamp)


class ExchangeFetchFeedback(_Remote, abc.ExchangeFetchFeedback):  # type: ignore[misc]
    def start(self) -> None:
        name = self.coursedir.assignment_id
        answer = self.call("GET", f"assignments/{name}/feedback")
        for sub in answer["submissions"]:
            folder = self.local(name) / "feedback" / sub["timestamp"]
            folder.mkdir(parents=True, exist_ok=True)
            for notebook, page in sub["feedback"].items():
                (folder / f"{notebook}.html").write_text(page)
        self.log.info("Fetched feedback for %d submission(s) of %s", len(answer["submissions"]), name)
