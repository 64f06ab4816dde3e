""":checkhealth invincat: OK with a working server, a clear error without one."""

from __future__ import annotations

from invincat_server.testing.fake_openai import FakeOpenAIServer
from tests.nvim.harness import RunNvim


def test_checkhealth_reports_the_server_its_version_and_the_model(
    nvim: RunNvim, fake_openai: FakeOpenAIServer
) -> None:
    report = nvim("health")["report"]
    assert "ERROR" not in report and "WARNING" not in report, report
    assert "OK Neovim 0.11" in report
    assert "OK server found: " in report and "/invincat" in report
    assert "OK version: invincat 0.1.0" in report
    assert "OK model configured: fake-model (the server opened its session)" in report
    # The server's own readiness and start-up timings (invincat/status), every step done.
    [line] = [ln for ln in report.splitlines() if "server state:" in ln]
    assert "server state: ready; start-up: initialize " in line and " - " not in line, line
    assert "stack import " in line and "session open " in line
    assert fake_openai.chat_requests() == []  # checking costs no model call


def test_checkhealth_without_a_server_says_it_is_missing_and_how_to_fix_it(
    nvim: RunNvim,
) -> None:
    report = nvim("health", cmd=["/nonexistent/bin/invincat", "--stdio"])["report"]
    assert "ERROR server not found: `/nonexistent/bin/invincat` is not executable" in report
    assert "pip install invincat-server" in report
    assert "setup({ cmd = {" in report


def test_checkhealth_without_a_model_configuration_names_what_to_set(nvim: RunNvim) -> None:
    report = nvim("health", unset=("OPENAI_API_KEY",))["report"]
    assert "OK version: invincat 0.1.0" in report
    assert "ERROR model not configured: OPENAI_API_KEY is not set" in report
    assert "server state: failed; start-up: initialize " in report
