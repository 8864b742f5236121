"""An integrator's tests, each in its own session: the clock each one advances is its own."""

NOTE = {"model": "social-notes-data", "input": {"mode": "note", "note": "https://notes.example.com/n/1", "agree": True}}


def test_a_note_succeeds_after_its_time(session):
    status, task = session.api("POST", "/v1/tasks", NOTE)
    assert status == 200 and task["status"] == "queued"
    session.advance(60)
    status, task = session.api("GET", f"/v1/tasks/{task['id']}")
    assert task["status"] == "succeeded"
    assert task["points"]["charged"] == "40.000"


def test_a_timeout_refunds_everything(session):
    status, task = session.api("POST", "/v1/tasks", NOTE, {"X-Emulator-Scenario": "timeout"})
    assert status == 200
    session.advance(3600)
    _, task = session.api("GET", f"/v1/tasks/{task['id']}")
    assert (task["status"], task["error"]["code"]) == ("failed", "timeout")
    _, account = session.control("GET", f"/_emulator/accounts/{session.account}")
    assert account["available"] == "100000.000"


def test_nothing_of_another_session_is_visible(session):
    _, tasks = session.api("GET", "/v1/tasks")
    assert tasks["data"] == []
    _, listed = session.control("GET", "/_emulator/sessions")
    assert [s["id"] for s in listed["data"]] == [session.id]
