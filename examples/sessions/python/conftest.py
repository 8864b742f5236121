"""One emulator for the whole run, one session per test: each test gets a world of its own (its own key,
account, tasks, call records and its own manual clock), so tests run in parallel (pytest-xdist's `-n`, or several
CI jobs) against the one emulator without seeing each other. Only the standard library: urllib and json."""

import json
import os
import urllib.error
import urllib.request

import pytest

BASE = os.environ.get("SVC_EMULATOR_URL", "http://127.0.0.1:4010")
ADMIN = os.environ["SVC_EMULATOR_ADMIN_TOKEN"]


def call(token, method, path, body=None, headers=None):
    """One HTTP call; answers (status, parsed JSON body)."""
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(BASE + path, data=data, method=method)
    request.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        request.add_header("Content-Type", "application/json")
    for name, value in (headers or {}).items():
        request.add_header(name, value)
    try:
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status, json.loads(response.read() or b"null")
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read() or b"null")


class Session:
    """A session: `api` calls /v1 with its key, `control` calls /_emulator with its own admin token."""

    def __init__(self, created):
        self.id = created["id"]
        self.key = created["key"]
        self.token = created["admin_token"]
        self.account = created["account"]["id"]

    def api(self, method, path, body=None, headers=None):
        return call(self.key, method, path, body, headers)

    def control(self, method, path, body=None):
        return call(self.token, method, path, body)

    def advance(self, seconds):
        status, clock = self.control("POST", "/_emulator/clock/advance", {"seconds": seconds})
        assert status == 200, clock
        return clock["now"]


@pytest.fixture
def session(request):
    status, created = call(ADMIN, "POST", "/_emulator/sessions", {"name": request.node.name, "clock": {"mode": "manual"}, "ttl_seconds": 600})
    assert status == 201, created
    made = Session(created)
    yield made
    # Ended with its own token; the time-to-live ends it anyway if the run is killed first.
    call(made.token, "DELETE", f"/_emulator/sessions/{made.id}")
