"""Keys go only where they belong, and no file a served run writes records one (issue 41, item 2).

``TEMPORAG_LLM_API_KEY`` is sent to the configured endpoint; ``OPENAI_API_KEY`` only to OpenAI's own host
or when ``TEMPORAG_LLM_SEND_OPENAI_KEY=1``; plain http:// only to loopback; a grid cannot name the
endpoint.  The last test runs a tiny notebook through the runner against the kit's stub server with a key
planted in the URL's userinfo, its query string and ``TEMPORAG_LLM_API_KEY``, builds the book, and greps
every file the run wrote for the keys.
"""

from __future__ import annotations

import json

import pytest
from fakes import tiny_notebook

from temporag.batch import grid
from temporag.batch.book import build_book
from temporag.cache import content_hash
from temporag.cli.environment import check_environment
from temporag.config import SettingError, get_settings
from temporag.llm import LLM
from temporag.llm.stub import StubServer
from temporag.methods.params import ParameterError
from temporag.methods.registry import check_given
from temporag.redact import MASK, redact, redact_text, redact_url
from temporag.run.runner import reproduce

USER_KEY = "sk-userinfo-4f1c9a27e"
QUERY_KEY = "sk-query-8b0d3e61a"
KIT_KEY = "sk-kitkey-2c7e5f90b"
OPENAI_KEY = "sk-openai-9a1b2c3d4"
PLANTED = (USER_KEY, QUERY_KEY, KIT_KEY, OPENAI_KEY)
MESSAGES = [{"role": "user", "content": "q"}]


def _with_credentials(url: str) -> str:
    """``http://127.0.0.1:PORT/v1`` with the planted keys in its userinfo and its query string."""
    return url.replace("http://", f"http://reader:{USER_KEY}@") + f"?api-key={QUERY_KEY}"


@pytest.fixture()
def no_keys(monkeypatch):
    """No key or key policy of the user's environment in a test."""
    for name in ("API_KEY", "SEND_OPENAI_KEY", "ALLOW_HTTP"):
        monkeypatch.delenv(f"TEMPORAG_LLM_{name}", raising=False)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)


# -- the redaction -------------------------------------------------------------------------------------


def test_a_url_without_credentials_is_unchanged_and_one_with_them_loses_them():
    for plain in ("http://127.0.0.1:8000/v1", "https://api.openai.com/v1", "http://[::1]:8/v1/"):
        assert redact_url(plain) == plain  # so no cache key or fingerprint of a plain endpoint moves
    keyed = f"https://u:{USER_KEY}@gpu.example:8000/v1?api-key={QUERY_KEY}#x"
    assert redact_url(keyed) == "https://gpu.example:8000/v1"
    assert redact({"llm_api_key": KIT_KEY, "llm_send_openai_key": True, "Authorization": "Bearer x"}) == {
        "llm_api_key": MASK,
        "llm_send_openai_key": True,
        "Authorization": MASK,
    }
    text = f"call to https://u:{USER_KEY}@h/v1?api-key={QUERY_KEY}: refused; token={KIT_KEY} (401)"
    assert redact_text(text) == f"call to https://h/v1: refused; token={MASK} (401)"


def test_settings_record_no_key(monkeypatch, no_keys):
    monkeypatch.setenv("TEMPORAG_LLM_API_KEY", KIT_KEY)
    monkeypatch.setenv("TEMPORAG_LLM_BASE_URL", _with_credentials("https://gpu.example/v1"))
    settings = get_settings()
    assert settings.llm_api_key == KIT_KEY  # the client gets it
    recorded = json.dumps(settings.to_dict()) + repr(settings)
    assert settings.to_dict()["llm_base_url"] == "https://gpu.example/v1"
    assert not [k for k in PLANTED if k in recorded]


def test_the_cache_key_of_an_endpoint_ignores_its_credentials(tmp_path, no_keys):
    with StubServer(service_s=0.0) as server:
        settings = get_settings(cache_dir=tmp_path).replace(llm_model="stub")
        plain = LLM(settings.replace(llm_base_url=server.url))
        keyed = LLM(settings.replace(llm_base_url=_with_credentials(server.url)))
        params = {"temperature": 0.0, "max_tokens": 8, "stop": None, "json_mode": False}
        # the key of before (model, URL as given, messages, params): entries cached already still hit
        assert plain.request_key(MESSAGES, params) == content_hash("stub", server.url, MESSAGES, params)
        assert keyed.endpoint == server.url
        assert keyed.request_key(MESSAGES, params) == plain.request_key(MESSAGES, params)


# -- which key goes where ------------------------------------------------------------------------------


def _served(url: str):
    """Settings for ``url`` as the environment makes them now (the keys read at this moment)."""
    return get_settings(llm_base_url=url, llm_max_retries=0).replace(llm_model="stub")


def _authorization(server: StubServer) -> str:
    """The Authorization header the kit's client sent the stub with the settings of now."""
    LLM(_served(server.url), cache=False).chat(MESSAGES, max_tokens=4)
    path, authorization = server.received[-1]
    assert path == "/v1/chat/completions"
    return authorization


def test_openai_key_is_not_sent_to_another_host(monkeypatch, no_keys):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    with StubServer(service_s=0.0) as server:
        assert _authorization(server) == "Bearer EMPTY"
        monkeypatch.setenv("TEMPORAG_LLM_API_KEY", KIT_KEY)  # the kit's own key goes to its endpoint
        assert _authorization(server) == f"Bearer {KIT_KEY}"
        monkeypatch.delenv("TEMPORAG_LLM_API_KEY")
        monkeypatch.setenv("TEMPORAG_LLM_SEND_OPENAI_KEY", "1")  # the user says so
        assert _authorization(server) == f"Bearer {OPENAI_KEY}"


def test_openai_key_goes_to_openais_own_host(monkeypatch, no_keys):
    monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
    llm = LLM(get_settings(llm_base_url="https://api.openai.com/v1", llm_model="gpt-4.1"), cache=False)
    assert llm.backend._client.api_key == OPENAI_KEY


def test_a_query_string_is_sent_as_the_query_not_glued_into_the_path(no_keys):
    with StubServer(service_s=0.0) as server:
        url = server.url + "?api-version=2024-10-21"
        LLM(_served(url), cache=False).chat(MESSAGES, max_tokens=4)
        assert server.received[-1][0] == "/v1/chat/completions?api-version=2024-10-21"


def test_plain_http_only_to_loopback(monkeypatch, no_keys):
    far = "http://10.0.0.1:8000/v1"
    with pytest.raises(SettingError, match="plain http:// to another machine") as err:
        LLM(get_settings(llm_base_url=far, llm_model="m"), cache=False)
    assert "\n" not in str(err.value) and "TEMPORAG_LLM_ALLOW_HTTP=1" in str(err.value)
    monkeypatch.setenv("TEMPORAG_LLM_BASE_URL", _with_credentials(far))
    with pytest.raises(SettingError) as err:
        check_environment()  # the command line's check, before any kernel starts
    assert USER_KEY not in str(err.value) and QUERY_KEY not in str(err.value)
    for ok in ("http://127.0.0.1:8000/v1", "http://localhost:8000/v1", "https://10.0.0.1/v1"):
        LLM(get_settings(llm_base_url=ok, llm_model="m"), cache=False)
    monkeypatch.setenv("TEMPORAG_LLM_ALLOW_HTTP", "1")
    LLM(get_settings(llm_base_url=far, llm_model="m"), cache=False)


# -- grids and parameters --------------------------------------------------------------------------------


@pytest.mark.parametrize("key", ["llm_base_url", "api_key", "llm_api_key"])
def test_a_grid_cannot_set_the_endpoint_or_a_key(tmp_path, key):
    notebooks = tmp_path / "notebooks"
    notebooks.mkdir()
    # a notebook that declares them: only the grid's own rule refuses them
    declared = 'profile = "smoke"\nllm_base_url = None\napi_key = None\nllm_api_key = None'
    tiny_notebook(notebooks / "ask.ipynb", declared)
    path = tmp_path / "theirs.toml"
    path.write_text(f'[[run]]\nnotebooks = ["ask"]\n{key} = "http://attacker.example/v1"\n')
    with pytest.raises(grid.GridError) as err:
        grid.expand(path, notebook_dir=notebooks, figures_dir=tmp_path / "fig", runs_dir=tmp_path / "runs")
    message = str(err.value)
    assert message.startswith(f"grid file {path}") and f"`{key}` cannot be set in a grid" in message
    assert "\n" not in message


def test_the_endpoint_parameter_refuses_credentials():
    with pytest.raises(ParameterError, match="without user:password@") as err:
        check_given("00_tour", {"llm_base_url": _with_credentials("https://h/v1")}, ["llm_base_url"])
    assert USER_KEY not in str(err.value) and QUERY_KEY not in str(err.value)
    check_given("00_tour", {"llm_base_url": "https://h/v1"}, ["llm_base_url"])


# -- a served run writes no key anywhere -------------------------------------------------------------------

# The kit's client and Results, as a notebook uses them; one prompt fails (a 500: an error message
# recorded), and the settings and the client are printed (what a reader of the executed notebook sees).
SERVED_RUN = """
from temporag.config import get_settings
from temporag.llm import LLM
from temporag.notebook.results import Results
res = Results("keyed", {"profile": profile, "output_dir": output_dir}, out_dir=output_dir)
settings = get_settings(llm_max_retries=0, llm_breaker=100).replace(llm_model="stub")
llm = LLM(settings)
print(settings, llm, llm.describe())
replies = llm.chat_many([[{"role": "user", "content": f"q{i}"}] for i in range(3)], progress=False)
res.metric("answered", sum(r.error is None for r in replies))
"""


FAIL = 'raise RuntimeError("the run stops after its calls")'


@pytest.mark.slow
def test_no_file_a_served_run_writes_holds_a_planted_key(tmp_path, tmp_cache, monkeypatch, no_keys):
    nbs = tmp_path / "notebooks"
    nbs.mkdir()
    tiny_notebook(nbs / "keyed.ipynb", 'profile = "smoke"\noutput_dir = None', SERVED_RUN)
    # the same run failing after its calls: a failed run keeps its staging folder, kernel log included
    # (a run that works removes its log before publishing), so the log is read too
    tiny_notebook(nbs / "keyfail.ipynb", 'profile = "smoke"\noutput_dir = None', SERVED_RUN, FAIL)
    dirs = {"notebook_dir": nbs, "figures_dir": tmp_path / "figures", "runs_dir": tmp_path / "runs"}
    with StubServer(service_s=0.0, fault=lambda prompt, n: "500" if prompt == "q2" else None) as server:
        monkeypatch.setenv("TEMPORAG_LLM_BASE_URL", _with_credentials(server.url))
        monkeypatch.setenv("TEMPORAG_LLM_API_KEY", KIT_KEY)
        monkeypatch.setenv("OPENAI_API_KEY", OPENAI_KEY)
        outcome, failed = reproduce(["keyed", "keyfail"], **dirs)
        assert outcome.status == "incomplete", outcome.error  # q2 failed: an error was recorded
        assert failed.status == "failed" and "RuntimeError" in failed.error
        build_book(tmp_path / "book", **{k: v for k, v in dirs.items() if k != "notebook_dir"})

    written = [p for p in tmp_path.rglob("*") if p.is_file() and not p.is_relative_to(nbs)]
    names = {p.name for p in written}
    assert {"results.json", "_run.json", "keyed.ipynb", "keyfail.ipynb", ".kernel.log", "llm.sqlite"} <= names
    assert "keyed-smoke.html" in names  # the book; a run's lock is gone once it ends
    leaks = [(str(p), key) for p in written for key in PLANTED if key.encode() in p.read_bytes()]
    assert leaks == []
    assert not [key for key in PLANTED if key in outcome.note + outcome.error]  # nor the console's lines
    results = json.loads((dirs["runs_dir"] / "smoke" / "keyed" / "results.json").read_text())
    assert (results["settings"]["llm_base_url"], results["settings"]["llm_api_key"]) == (server.url, MASK)
    assert "500" in results["llm_calls"]["last_error"]
    # the keys did go where the user put them: the URL's user:password and its query, not OpenAI's key
    assert server.requests == {"q0": 1, "q1": 1, "q2": 2}  # the failing copy: q0, q1 from the cache, q2 again
    assert all(path.endswith(f"?api-key={QUERY_KEY}") for path, _ in server.received)
    assert all(auth.startswith("Basic ") for _, auth in server.received)  # httpx sends the userinfo so
