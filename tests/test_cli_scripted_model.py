"""``silo-async scripted-model``: a script file served as a model, for ``run --base-url``.

End to end as a user runs it: the command in its own process prints its base URL, ``run
--model openai/... --base-url URL`` plays the crm task against it through the real OpenAI SDK,
and Ctrl-C or SIGTERM stops it cleanly.
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from .cli_support import cli

ROOT = Path(__file__).resolve().parent.parent
CRM_MODEL = ROOT / "examples" / "agents" / "crm_model.py"
WAIT_S = 60  # generous: a loaded 2-core machine; a hang is caught by the test timeout anyway


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    return tmp_path


def _start(cwd: Path, *args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [sys.executable, "-m", "silo_async", "scripted-model", *args],
        cwd=cwd,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def served(project: Path) -> Iterator[list[subprocess.Popen[str]]]:
    """The servers a test started; any still running at its end is killed."""
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.kill()
            process.wait(WAIT_S)


def _stop(process: subprocess.Popen[str], how: signal.Signals) -> tuple[int, str]:
    process.send_signal(how)
    _, err = process.communicate(timeout=WAIT_S)
    return process.returncode, err


def test_a_run_plays_against_the_served_script_then_ctrl_c_stops_it(
    project: Path, served: list[subprocess.Popen[str]]
) -> None:
    pytest.importorskip("openai")
    assert cli("init", "demo", "--template", "crm").exit_code == 0
    process = _start(project, f"{CRM_MODEL}:play")
    served.append(process)
    assert process.stdout is not None
    base_url = process.stdout.readline().strip()
    assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1"), base_url

    args = ["--env", "demo", "--task", "TASK-001", "--json"]
    result = cli("run", *args, "--model", "openai/scripted", "--base-url", base_url)
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["passed"] and report["modelSteps"] == 4 and report["toolErrors"] == 1

    status, err = _stop(process, signal.SIGINT)
    assert status == 0, err
    assert "--model openai/scripted --base-url " + base_url in err
    assert err.rstrip().endswith("Stopped after 4 requests.")


def test_a_list_script_with_json_output_and_sigterm(
    project: Path, served: list[subprocess.Popen[str]]
) -> None:
    pytest.importorskip("openai")
    from openai import OpenAI

    (project / "hello.py").write_text(
        "from silo_async.testing import Reply\n\nreplies = [Reply(text='Hello.')]\n",
        encoding="utf-8",
    )
    process = _start(project, "hello.py:replies", "--json")
    served.append(process)
    assert process.stdout is not None
    urls = json.loads(process.stdout.readline())
    assert urls["script"] == "hello.py:replies" and urls["baseUrl"] == urls["url"] + "/v1"
    client = OpenAI(base_url=urls["baseUrl"], api_key="unused", max_retries=0)
    with client:
        answer = client.chat.completions.create(
            model="scripted", messages=[{"role": "user", "content": "Hi"}]
        )
    assert answer.choices[0].message.content == "Hello."
    status, err = _stop(process, signal.SIGTERM)
    assert status == 0 and "Stopped after 1 request." in err


def test_a_script_function_that_raises_is_reported_and_fails_the_exit(
    project: Path, served: list[subprocess.Popen[str]]
) -> None:
    pytest.importorskip("openai")
    import openai

    (project / "broken.py").write_text(
        "def script(request):\n    raise ValueError('no idea')\n", encoding="utf-8"
    )
    process = _start(project, "broken.py")
    served.append(process)
    assert process.stdout is not None
    client = openai.OpenAI(base_url=process.stdout.readline().strip(), api_key="-", max_retries=0)
    with client, pytest.raises(openai.InternalServerError, match="ValueError: no idea"):
        client.chat.completions.create(model="m", messages=[{"role": "user", "content": "Hi"}])
    status, err = _stop(process, signal.SIGINT)
    assert status == 1
    assert "warning: the script raised ValueError: no idea (request 0, answered 500)" in err
    assert "error: model_script_failed: the script raised 1 time(s); first: ValueError" in err


@pytest.mark.parametrize(
    ("body", "spec", "code", "says"),
    [
        (None, "absent.py", "model_script_not_found", 'Script file "absent.py" was not found'),
        ("x = 1\n", "s.py", "model_script_not_found", 'has no "script"; name one of its'),
        ("script = 5\n", "s.py", "model_script_invalid", '"script" in "s.py" is a int'),
        ("import nowhere_at_all\n", "s.py", "model_script_invalid", "ModuleNotFoundError"),
        ("script = []\n", "s.py:other", "model_script_not_found", 'has no "other"'),
    ],
)
def test_a_script_that_cannot_serve_is_one_error_line(
    project: Path, body: str | None, spec: str, code: str, says: str
) -> None:
    if body is not None:
        (project / "s.py").write_text(body, encoding="utf-8")
    result = cli("scripted-model", spec)
    assert result.exit_code == 1
    assert result.stderr.startswith(f"error: {code}: ") and says in result.stderr
    assert result.stdout == ""
