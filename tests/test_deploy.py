"""deploy/compose.yaml matches what BookReader expects (Docker itself is not available
here): its services, ports, volumes and health checks, and the server's command line read
by BookReader's own argument parser and settings code.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urlsplit

import pytest

yaml = pytest.importorskip("yaml", reason="PyYAML (the dev extra) reads the compose file")

DEPLOY = Path(__file__).resolve().parent.parent / "deploy"
PASSWORD = "pw-from-dot-env"


def _substitute(value, env: dict[str, str]):
    """Compose's ``${VAR}``, ``${VAR:-default}`` and ``${VAR:?message}`` with ``env``."""
    if isinstance(value, dict):
        return {k: _substitute(v, env) for k, v in value.items()}
    if isinstance(value, list):
        return [_substitute(v, env) for v in value]
    if not isinstance(value, str):
        return value

    def one(m: re.Match) -> str:
        name, op, arg = m.group(1), m.group(2) or "", m.group(3) or ""
        if name in env and (env[name] or op != ":-"):
            return env[name]
        if op == ":?":
            raise AssertionError(f"{name} is required: {arg}")
        return arg

    return re.sub(r"\$\{([A-Z_]+)(:-|:\?)?([^}]*)\}", one, value)


@pytest.fixture(scope="module")
def compose() -> dict:
    raw = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    return _substitute(raw, {"POSTGRES_PASSWORD": PASSWORD})


@pytest.fixture(scope="module")
def serve_args(compose):
    from bookreader.cli import build_parser

    return build_parser().parse_args(compose["services"]["bookreader"]["command"])


def _port(service: dict, default: int) -> set[int]:
    ports = {int(str(p).split(":")[-1]) for p in service.get("ports", [])}
    return ports | {int(p) for p in service.get("expose", [])} or {default}


def test_the_services_and_their_data_volumes(compose):
    services = compose["services"]
    assert set(services) == {"bookreader", "qdrant", "postgres", "ollama", "ollama-pull"}
    mounts = {name: {str(v).split(":")[1] for v in s.get("volumes", [])}
              for name, s in services.items()}
    assert "/qdrant/storage" in mounts["qdrant"]
    assert "/var/lib/postgresql/data" in mounts["postgres"]
    assert "/root/.ollama" in mounts["ollama"]
    named = {str(v).split(":")[0] for s in services.values() for v in s.get("volumes", [])
             if not str(v).startswith(".")}
    assert named == set(compose["volumes"])  # every named volume declared, none unused
    for name in ("bookreader", "qdrant", "postgres", "ollama"):
        assert services[name]["healthcheck"]["test"], name
        assert services[name]["restart"] == "unless-stopped"


def test_the_server_waits_for_healthy_engines(compose):
    depends = compose["services"]["bookreader"]["depends_on"]
    assert depends["postgres"]["condition"] == depends["qdrant"]["condition"] == "service_healthy"
    assert depends["ollama-pull"]["condition"] == "service_completed_successfully"
    pull = compose["services"]["ollama-pull"]
    assert pull["depends_on"]["ollama"]["condition"] == "service_healthy"


def test_the_command_line_is_one_bookreader_accepts(serve_args, compose):
    from bookreader.cli_serve import cmd_serve

    assert serve_args.func is cmd_serve and serve_args.host == "0.0.0.0"
    service = compose["services"]["bookreader"]
    assert {f"{serve_args.port}:{serve_args.port}"} == set(service["ports"])
    assert str(serve_args.port) in service["healthcheck"]["test"][-1]
    assert "/health" in service["healthcheck"]["test"][-1]
    assert serve_args.rate_limit_store == "shared"
    from bookreader.server.limits import parse_rate

    parse_rate(serve_args.rate_limit)
    books = [str(v).split(":")[1] for v in service["volumes"] if str(v).startswith("./books")]
    assert serve_args.book == books  # the served folder is the mounted one


def test_the_engine_is_the_ollama_service_on_its_port(serve_args, compose, tmp_path):
    from bookreader.config import Settings
    from bookreader.core.llm.openai_servers import KNOWN_SERVERS, is_local_url
    from bookreader.core.llm.registry import create_backend, spec_of

    url = serve_args.backend.removeprefix("openai:")
    parts = urlsplit(url)
    assert parts.hostname == "ollama" and parts.path == "/v1"
    assert parts.port == dict(KNOWN_SERVERS)["Ollama"]
    assert parts.port in _port(compose["services"]["ollama"], 0)
    assert is_local_url(url)  # a service name: no "passages leave the machine" notice
    model = compose["services"]["ollama-pull"]["entrypoint"][-1]
    assert serve_args.model == model  # the model pulled is the model asked
    settings = Settings(data_dir=tmp_path).updated(openai_model=serve_args.model)
    backend = create_backend(serve_args.backend, settings)  # builds, contacts nothing
    assert backend.model_name == f"{model} @ ollama:11434"
    assert spec_of(serve_args.backend, settings).total_s is not None  # a remote budget


def test_the_store_is_the_qdrant_service(serve_args, compose, tmp_path):
    from bookreader.cli_serve import with_store
    from bookreader.config import Settings

    settings = with_store(Settings(data_dir=tmp_path), serve_args.store)
    assert settings.store_backend == "server"
    parts = urlsplit(settings.qdrant_url)
    assert parts.hostname == "qdrant" and parts.port in _port(compose["services"]["qdrant"], 0)
    assert parts.port == 6333  # Qdrant's REST port (the client speaks REST by default)


def test_the_audit_log_is_the_postgres_service(compose):
    from sqlalchemy.engine import make_url

    env = compose["services"]["bookreader"]["environment"]
    url = make_url(env["BOOKREADER_AUDIT_URL"])
    pg = compose["services"]["postgres"]["environment"]
    assert url.drivername == "postgresql+psycopg"
    assert (url.host, url.port) == ("postgres", 5432)
    assert (url.username, url.password, url.database) == (
        pg["POSTGRES_USER"], PASSWORD, pg["POSTGRES_DB"])
    assert 5432 in _port(compose["services"]["postgres"], 0)
    from bookreader.cli_serve import AUDIT_URL_ENV

    assert AUDIT_URL_ENV in env
    data = [str(v).split(":")[1] for v in compose["services"]["bookreader"]["volumes"]
            if str(v).startswith("bookreader-data")]
    assert data == [env["BOOKREADER_DATA_DIR"]]


def test_the_image_runs_bookreader_with_the_postgres_driver():
    text = (DEPLOY / "Dockerfile").read_text(encoding="utf-8")
    assert 'ENTRYPOINT ["bookreader"]' in text and "psycopg" in text
    assert "EXPOSE 8765" in text and "HF_HUB_OFFLINE=1" in text


def test_a_password_is_required(tmp_path):
    raw = yaml.safe_load((DEPLOY / "compose.yaml").read_text(encoding="utf-8"))
    with pytest.raises(AssertionError, match="POSTGRES_PASSWORD"):
        _substitute(raw, {})
