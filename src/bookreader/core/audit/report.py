"""The instructor's report: one self-contained HTML page with inline SVG charts.

No script, no web font, no image file, no network: the page is a single file an instructor
can open anywhere or attach to an email.  Records are streamed once and only counters and
latency lists are kept, so 100,000 records need a few megabytes.
"""

from __future__ import annotations

import html
import logging
import os
from collections import Counter, defaultdict
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path
from typing import Any, Iterable, Optional, Sequence

from bookreader.core.audit.records import iter_pages, normalise, parse_timestamp, utc_timestamp
from bookreader.core.prompts import STOPPED_MESSAGE
from bookreader.errors import BookReaderError

log = logging.getLogger(__name__)

MODE_COLORS = {"book": "#3b6fb6", "selected": "#e8871e", "highlight": "#3a9a5b"}
LEVEL_COLORS = {"high": "#3a9a5b", "medium": "#e3b505", "low": "#d64545", "": "#9aa3ad"}
ACCENT = "#3b6fb6"
MUTED = "#6b7480"
STAGES = [
    ("retrieval_ms", "Retrieval"),
    ("first_token_ms", "First token"),
    ("generation_ms", "Generation"),
    ("latency_ms", "Whole answer"),
]
PCTS = (50, 90, 95, 99)


def esc(text: Any) -> str:
    return html.escape(str(text), quote=True)


def percentile(sorted_values: list[float], pct: float) -> Optional[float]:
    """Linear-interpolated percentile of an already sorted list (None when empty)."""
    if not sorted_values:
        return None
    k = (len(sorted_values) - 1) * pct / 100.0
    lo = int(k)
    hi = min(lo + 1, len(sorted_values) - 1)
    return sorted_values[lo] + (sorted_values[hi] - sorted_values[lo]) * (k - lo)


def fmt_ms(ms: Optional[float]) -> str:
    if ms is None:
        return "–"
    return f"{ms:.0f} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


def fmt_pct(x: float) -> str:
    return f"{100 * x:.0f}%" if x >= 0.1 or x == 0 else f"{100 * x:.1f}%"


@dataclass
class Stats:
    """Everything the page shows, gathered in one pass over the records."""

    n: int = 0
    first: str = ""
    last: str = ""
    modes: Counter = field(default_factory=Counter)
    chapters: Counter = field(default_factory=Counter)
    pages: Counter = field(default_factory=Counter)  # (book title, 0-based page)
    page_labels: dict = field(default_factory=dict)  # (book title, page) -> printed label
    days: Counter = field(default_factory=Counter)
    books: Counter = field(default_factory=Counter)
    sessions: set = field(default_factory=set)
    clients: Counter = field(default_factory=Counter)  # API key names (bookreader serve)
    fallback: Counter = field(default_factory=Counter)  # per mode: "not in the book/selection"
    outcomes: Counter = field(default_factory=Counter)  # core.types.Outcome values
    validated: Counter = field(default_factory=Counter)  # per mode
    failed_validation: Counter = field(default_factory=Counter)  # per mode
    errors: Counter = field(default_factory=Counter)  # per mode; not timeouts, not Stops
    stopped: int = 0  # answers the student stopped (a server's time budget is a timeout)
    confidence: list = field(default_factory=lambda: [Counter() for _ in range(10)])
    levels: Counter = field(default_factory=Counter)
    latencies: dict = field(default_factory=lambda: defaultdict(list))

    def add(self, row: dict[str, Any]) -> None:
        row = normalise(row)
        self.n += 1
        ts = row["created_at"] or ""
        self.first = min(self.first, ts) if self.first else ts
        self.last = max(self.last, ts)
        self.days[ts[:10]] += 1
        mode = row["mode"] or "?"
        self.modes[mode] += 1
        title = row["book_title"] or row["book_id"] or "(no book)"
        self.books[title] += 1
        self.sessions.add(row["session_id"])
        if row.get("client_id"):
            self.clients[row["client_id"]] += 1
        chapter = row["chapter"] or next(
            (c.get("chapter") for c in row["chunks"] or () if c.get("chapter")), ""
        )
        self.chapters[chapter or "(chapter unknown)"] += 1
        for page, label in iter_pages(row):
            self.pages[(title, page)] += 1
            known = self.page_labels.get((title, page), "")
            if not known or known.startswith("PDF page"):  # a printed label wins
                self.page_labels[(title, page)] = label
        outcome = row_outcome(row)
        self.outcomes[outcome] += 1
        # Only a retrieval or selection that truly does not answer counts as "not in the
        # book": timeouts, errors and quotes are counted apart.
        if outcome in ("not_covered", "not_in_selection"):
            self.fallback[mode] += 1
        if row["validation_passed"] is not None:
            self.validated[mode] += 1
            if not row["validation_passed"]:
                self.failed_validation[mode] += 1
        if outcome == "error":
            if (row["error_message"] or "") == STOPPED_MESSAGE:
                self.stopped += 1
            else:
                self.errors[mode] += 1
        conf = row["confidence"]
        if conf is not None and row["success"]:
            level = (row["confidence_level"] or "").lower()
            level = level if level in LEVEL_COLORS else ""
            self.confidence[min(9, max(0, int(conf * 10)))][level] += 1
            self.levels[level] += 1
        for key, _ in STAGES:
            if row[key] is not None:
                self.latencies[key].append(row[key])


# --- SVG pieces ----------------------------------------------------------------------------------
def _svg(width: int, height: int, body: str, label: str) -> str:
    return (
        f'<svg viewBox="0 0 {width} {height}" width="100%" role="img" aria-label="{esc(label)}" '
        f'xmlns="http://www.w3.org/2000/svg" font-family="inherit">{body}</svg>'
    )


def _short(text: str, n: int) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def hbars(items: Sequence[tuple[Any, float, str, str]], *, width: int = 560, label_w: int = 190,
          vmax: Optional[float] = None, title: str = "") -> str:
    """Horizontal bars: (label, value, shown value text, colour) per row."""
    if not items:
        return '<p class="empty">Nothing to show.</p>'
    row_h, pad = 30, 6
    vmax = vmax or max(v for _, v, _, _ in items) or 1
    value_w = 16 + 8 * max(len(shown) for _, _, shown, _ in items)  # room for the value text
    bar_w = width - label_w - value_w
    parts = []
    for i, (label, value, shown, color) in enumerate(items):
        y = i * row_h
        w = max(2.0, bar_w * value / vmax) if value > 0 else 0
        parts.append(
            f'<g><title>{esc(label)}: {esc(shown)}</title>'
            f'<text x="{label_w - 10}" y="{y + row_h / 2 + 5}" text-anchor="end" '
            f'font-size="13" fill="#2b2f36">{esc(_short(label, max(6, int(label_w / 6.6))))}</text>'
            f'<rect x="{label_w}" y="{y + pad}" width="{bar_w}" height="{row_h - 2 * pad}" '
            f'rx="4" fill="#eef1f5"/>'
            f'<rect x="{label_w}" y="{y + pad}" width="{w:.1f}" height="{row_h - 2 * pad}" '
            f'rx="4" fill="{color}"/>'
            f'<text x="{label_w + bar_w + 8}" y="{y + row_h / 2 + 5}" font-size="13" '
            f'font-weight="600" fill="#2b2f36">{esc(shown)}</text></g>'
        )
    return _svg(width, row_h * len(items), "".join(parts), title)


def columns(items: list[tuple[str, float]], *, width: int = 1140, height: int = 200,
            color: str = ACCENT, title: str = "", every: int = 1) -> str:
    """Vertical bars with a baseline, the tallest labelled, x labels every ``every`` bars."""
    if not items:
        return '<p class="empty">Nothing to show.</p>'
    top, bottom, left = 22, 28, 8
    plot_h = height - top - bottom
    vmax = max(v for _, v in items) or 1
    slot = (width - 2 * left) / len(items)
    bw = max(1.0, slot * 0.78)
    parts = [f'<line x1="{left}" x2="{width - left}" y1="{top + plot_h}" y2="{top + plot_h}" '
             'stroke="#c9cfd6"/>']
    peak = max(range(len(items)), key=lambda i: items[i][1])
    for i, (label, v) in enumerate(items):
        h = plot_h * v / vmax
        x = left + i * slot + (slot - bw) / 2
        parts.append(
            f'<rect x="{x:.1f}" y="{top + plot_h - h:.1f}" width="{bw:.1f}" height="{h:.1f}" '
            f'rx="2" fill="{color}"><title>{esc(label)}: {v:g}</title></rect>'
        )
        if i == peak:
            parts.append(f'<text x="{x + bw / 2:.1f}" y="{top + plot_h - h - 6:.1f}" '
                         f'text-anchor="middle" font-size="12" font-weight="600">{v:g}</text>')
        if i % every == 0:
            parts.append(f'<text x="{x + bw / 2:.1f}" y="{height - 8}" text-anchor="middle" '
                         f'font-size="11" fill="{MUTED}">{esc(label)}</text>')
    return _svg(width, height, "".join(parts), title)


def histogram(bins: list[Counter], *, width: int = 560, height: int = 230) -> str:
    """Confidence histogram, 10 bins over [0, 1], each bar stacked by confidence level."""
    top, bottom, left = 20, 40, 34
    plot_h, plot_w = height - top - bottom, width - left - 10
    totals = [sum(b.values()) for b in bins]
    vmax = max(totals) or 1
    slot = plot_w / len(bins)
    parts = []
    for frac in (0.5, 1.0):
        y = top + plot_h * (1 - frac)
        parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{y:.1f}" y2="{y:.1f}" '
                     'stroke="#e3e7ec"/>'
                     f'<text x="{left - 6}" y="{y + 4:.1f}" text-anchor="end" font-size="11" '
                     f'fill="{MUTED}">{vmax * frac:.0f}</text>')
    for i, b in enumerate(bins):
        x = left + i * slot + 3
        y = top + plot_h
        for level in ("low", "medium", "high", ""):
            h = plot_h * b.get(level, 0) / vmax
            if h:
                y -= h
                parts.append(
                    f'<rect x="{x:.1f}" y="{y:.1f}" width="{slot - 6:.1f}" height="{h:.1f}" '
                    f'fill="{LEVEL_COLORS[level]}"><title>{i / 10:.1f}–{(i + 1) / 10:.1f}, '
                    f'{esc(level or "no level")}: {b.get(level, 0)}</title></rect>'
                )
    for i in range(len(bins) + 1):  # ticks on the bin edges
        parts.append(f'<text x="{left + i * slot:.1f}" y="{top + plot_h + 16}" '
                     f'text-anchor="middle" font-size="11" fill="{MUTED}">{i / 10:g}</text>')
    parts.append(f'<line x1="{left}" x2="{width - 10}" y1="{top + plot_h}" y2="{top + plot_h}" '
                 'stroke="#c9cfd6"/>')
    parts.append(f'<text x="{left + plot_w / 2}" y="{height - 4}" text-anchor="middle" '
                 f'font-size="12" fill="{MUTED}">confidence shown to the student</text>')
    return _svg(width, height, "".join(parts), "Confidence distribution")


def latency_panel(latencies: dict[str, list[float]], *, width: int = 560) -> str:
    """One row per stage on a shared scale: a bar to the median, a lighter bar on to p95,
    a tick at p99, and the figures written under it."""
    stages = []
    for key, name in STAGES:
        values = sorted(latencies.get(key) or [])
        if values:
            stages.append((name, len(values), [percentile(values, p) for p in PCTS]))
    if not stages:
        return '<p class="empty">No latencies recorded.</p>'
    label_w, row_h, right = 128, 52, 14
    plot_w = width - label_w - right
    vmax = max(ps[-1] for _, _, ps in stages) or 1.0
    x = lambda v: label_w + plot_w * v / vmax  # noqa: E731
    parts = []
    for i, (name, n, (p50, p90, p95, p99)) in enumerate(stages):
        y = i * row_h + 6
        parts.append(
            f'<g><title>{esc(name)}: p50 {fmt_ms(p50)}, p90 {fmt_ms(p90)}, p95 {fmt_ms(p95)}, '
            f'p99 {fmt_ms(p99)} ({n:,} answers)</title>'
            f'<text x="{label_w - 10}" y="{y + 15}" text-anchor="end" font-size="13" '
            f'font-weight="600" fill="#2b2f36">{esc(name)}</text>'
            f'<rect x="{label_w}" y="{y + 4}" width="{plot_w}" height="16" rx="4" '
            f'fill="#eef1f5"/>'
            f'<rect x="{label_w}" y="{y + 4}" width="{max(2, x(p95) - label_w):.1f}" height="16" '
            f'rx="4" fill="#9db8de"/>'
            f'<rect x="{label_w}" y="{y + 4}" width="{max(2, x(p50) - label_w):.1f}" height="16" '
            f'rx="4" fill="{ACCENT}"/>'
            f'<line x1="{x(p99):.1f}" x2="{x(p99):.1f}" y1="{y}" y2="{y + 24}" stroke="#23497f" '
            f'stroke-width="2"/>'
            f'<text x="{label_w}" y="{y + 38}" font-size="12" fill="{MUTED}">median '
            f'<tspan font-weight="600" fill="#2b2f36">{fmt_ms(p50)}</tspan> · p90 {fmt_ms(p90)}'
            f' · p95 {fmt_ms(p95)} · p99 {fmt_ms(p99)}</text></g>'
        )
    legend = (
        f'<g font-size="12" fill="{MUTED}" transform="translate({label_w},{len(stages) * row_h + 10})">'
        f'<rect width="11" height="11" rx="3" fill="{ACCENT}"/><text x="16" y="10">median</text>'
        f'<rect x="80" width="11" height="11" rx="3" fill="#9db8de"/>'
        f'<text x="96" y="10">to 95th percentile</text>'
        f'<line x1="230" x2="230" y1="-2" y2="13" stroke="#23497f" stroke-width="2"/>'
        f'<text x="237" y="10">99th percentile</text></g>'
    )
    return _svg(width, len(stages) * row_h + 28, "".join(parts) + legend, "Latency percentiles")


# --- the page -------------------------------------------------------------------------------------
CSS = """
*{box-sizing:border-box}
body{margin:0;background:#f4f6f9;color:#2b2f36;
font:15px/1.45 system-ui,-apple-system,"Segoe UI",Roboto,"DejaVu Sans",sans-serif}
header{background:linear-gradient(120deg,#23497f,#3b6fb6);color:#fff;padding:28px 40px 24px}
header h1{margin:0 0 4px;font-size:26px;font-weight:650}
header p{margin:0;opacity:.9}
main{max-width:1240px;margin:0 auto;padding:24px 28px 40px}
.kpis{display:grid;grid-template-columns:repeat(6,1fr);gap:14px;margin-bottom:18px}
.kpi{background:#fff;border-radius:12px;padding:14px 16px;box-shadow:0 1px 3px #0001}
.kpi b{display:block;font-size:26px;font-weight:700;color:#23497f}
.kpi span{color:#6b7480;font-size:13px}
.kpi.warn b{color:#c0392b}
.grid{display:grid;grid-template-columns:1fr 1fr;gap:18px}
.card{background:#fff;border-radius:12px;padding:18px 20px;box-shadow:0 1px 3px #0001}
.card.wide{grid-column:1/-1}
.card h2{margin:0 0 2px;font-size:17px}
.card .sub{margin:0 0 12px;color:#6b7480;font-size:13px}
.legend{display:flex;gap:14px;font-size:13px;color:#6b7480;margin:6px 0 0}
.legend i{display:inline-block;width:11px;height:11px;border-radius:3px;margin-right:5px;
vertical-align:-1px}
.lats{display:grid;grid-template-columns:1fr 1fr;gap:4px 28px}
.lat h3{font-size:14px;margin:6px 0 2px}.lat h3 span{font-weight:400;color:#6b7480;
margin-left:8px;font-size:12px}
.empty{color:#6b7480;font-style:italic}
footer{color:#6b7480;font-size:12px;text-align:center;padding:10px 0 30px}
"""


def _legend(colors: dict[str, str], names: dict[str, str]) -> str:
    return '<p class="legend">' + "".join(
        f'<span><i style="background:{c}"></i>{esc(names.get(k, k))}</span>'
        for k, c in colors.items()) + "</p>"


def _span_text(s: Stats) -> tuple[str, str]:
    if not s.n:
        return "no records", ""
    a, b = parse_timestamp(s.first), parse_timestamp(s.last)
    days = (b.date() - a.date()).days + 1
    return f"{a:%d %b %Y} – {b:%d %b %Y}", f"{days} day{'s' if days != 1 else ''}"


def _per_day(s: Stats) -> tuple[list[tuple[str, float]], int, str]:
    """Questions per day (per week past 90 days) over the whole span, empty days included."""
    if not s.n:
        return [], 1, "day"
    a, b = parse_timestamp(s.first).date(), parse_timestamp(s.last).date()
    step, unit = (1, "day") if (b - a).days <= 90 else (7, "week")
    out, d = [], a
    while d <= b:
        n = sum(s.days.get(str(d + timedelta(days=k)), 0) for k in range(step))
        out.append((f"{d:%d %b}", float(n)))
        d += timedelta(days=step)
    return out, max(1, len(out) // 12), unit


def row_outcome(row: dict[str, Any]) -> str:
    """The record's outcome; derived for records written before outcomes were stored."""
    if row.get("outcome"):
        return str(row["outcome"])
    if not row.get("success", True):
        msg = (row.get("error_message") or "").lower()
        return "timeout" if "timed out" in msg else "error"
    if not row.get("fallback"):
        return "answer"
    return "not_covered" if row.get("mode") == "book" else "not_in_selection"


def render(s: Stats, *, filters: dict[str, Any], source: str) -> str:
    span, days = _span_text(s)
    validated = sum(s.validated.values())
    failed = sum(s.failed_validation.values())
    n = max(s.n, 1)
    kpis = [
        (f"{s.n:,}", "questions", False),
        (f"{len(s.sessions):,}", "sessions", False),
        (f"{len(s.books):,}", "books", False),
        (fmt_pct(sum(s.fallback.values()) / n), "answered 'not in the book'", False),
        (fmt_pct(s.outcomes["quotes"] / n), "got quotes, no verified answer", False),
        (fmt_pct(s.outcomes["timeout"] / n), "timed out", s.outcomes["timeout"] > 0),
        (fmt_pct(failed / validated) if validated else "–", "failed validation", failed > 0),
        (fmt_pct(sum(s.errors.values()) / n), "ended in an error", sum(s.errors.values()) > 0),
        (f"{s.stopped:,}", "stopped by the student", False),
    ]
    if s.clients:
        kpis.insert(2, (f"{len(s.clients):,}", "server clients", False))
    kpi_html = "".join(f'<div class="kpi{" warn" if w else ""}"><b>{esc(v)}</b>'
                       f"<span>{esc(t)}</span></div>" for v, t, w in kpis)
    mode_names = {"book": "Whole book", "selected": "Selected text", "highlight": "Highlight"}
    modes = [(mode_names.get(m, m), c, f"{c:,} · {fmt_pct(c / n)}", MODE_COLORS.get(m, ACCENT))
             for m, c in s.modes.most_common()]
    rates = []
    for m, c in s.modes.most_common():
        name = mode_names.get(m, m)
        rates.append((f"{name}: not in book", s.fallback[m] / c, fmt_pct(s.fallback[m] / c),
                      "#8e7cc3"))
        if s.validated[m]:
            r = s.failed_validation[m] / s.validated[m]
            rates.append((f"{name}: failed check", r, fmt_pct(r), "#d64545"))
    chapters = [(ch, c, f"{c:,}", ACCENT) for ch, c in s.chapters.most_common(12)]
    one_book = len(s.books) == 1
    def page_name(title: str, page: int) -> str:
        label = s.page_labels.get((title, page), "")
        name = label if label.startswith("PDF page") else f"p. {label}"
        return name if one_book else f"{name} · {_short(title, 18)}"

    pages = [(page_name(title, page), c, f"{c:,}", "#2f8f9d")
             for (title, page), c in s.pages.most_common(10)]
    clients = [(name, c, f"{c:,}", "#2f8f9d") for name, c in s.clients.most_common(12)]
    clients_card = (
        '<div class="card"><h2>Questions per server client</h2><p class="sub">The API keys '
        f'of <code>bookreader serve</code> that asked most</p>{hbars(clients, title="Questions per client")}'
        "</div>" if clients else ""
    )
    days_items, every, unit = _per_day(s)
    level_names = {"high": "high", "medium": "medium", "low": "low", "": "no level"}
    level_counts = ", ".join(f"{level_names[k]} {fmt_pct(v / max(1, sum(s.levels.values())))}"
                             for k, v in s.levels.most_common())
    shown_filters = ", ".join(f"{k} = {v}" for k, v in filters.items() if v not in (None, ""))
    body = f"""
<header><h1>BookReader · class questions report</h1>
<p>{esc(span)}{' · ' + esc(days) if days else ''}{' · filtered: ' + esc(shown_filters)
                                                   if shown_filters else ''}</p></header>
<main>
<section class="kpis">{kpi_html}</section>
<p class="sub">Shares are of all {s.n:,} questions, except "failed validation": of the
{validated:,} answers the grounding check looked at. A session is one run of BookReader.</p>
<section class="grid">
<div class="card"><h2>Questions per mode</h2><p class="sub">How students asked</p>
{hbars(modes, title="Questions per mode")}</div>
<div class="card"><h2>Not in the book, and failed checks</h2>
<p class="sub">Share of answers per mode that said the book does not cover the question,
or whose answer failed the grounding check</p>
{hbars(rates, vmax=1.0, title="Fallback and validation failure rates")}</div>
<div class="card wide"><h2>Questions per {unit}</h2><p class="sub">{esc(span)}</p>
{columns(days_items, every=every, title="Questions over time")}</div>
<div class="card"><h2>Questions per chapter</h2><p class="sub">The 12 chapters asked about
most</p>{hbars(chapters, title="Questions per chapter")}</div>
<div class="card"><h2>Most asked pages</h2><p class="sub">Selected page, else the cited or
best-matching page</p>{hbars(pages, label_w=230, title="Most asked pages")}</div>
<div class="card"><h2>Confidence distribution</h2><p class="sub">{esc(level_counts) or
'No answers'}</p>{histogram(s.confidence)}
{_legend({k: LEVEL_COLORS[k] for k in ("high", "medium", "low")}, level_names)}</div>
<div class="card"><h2>Latency percentiles</h2><p class="sub">How long students waited, per stage, on one scale</p>
{latency_panel(s.latencies)}</div>
{clients_card}
</section></main>
<footer>{s.n:,} records from {esc(source)} · generated {esc(utc_timestamp()[:19])} UTC ·
made by BookReader, works offline</footer>"""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">"
            "<title>BookReader audit report</title>"
            f"<style>{CSS}</style></head><body>{body}</body></html>\n")


def write_report(rows: Iterable[dict[str, Any]], out: Path, *, filters: dict[str, Any],
                 source: str) -> Path:
    """Gather the statistics of ``rows`` and write the page to ``out``; returns ``out``."""
    stats = Stats()
    for row in rows:
        stats.add(row)
    page = render(stats, filters=filters, source=source)
    from bookreader.core.audit.export import refuse_special_file

    refuse_special_file(out)
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        tmp = out.with_name(out.name + ".part")
        tmp.write_text(page, encoding="utf-8")
        os.replace(tmp, out)
    except OSError as exc:
        raise BookReaderError(
            f"Cannot write the report to {out}: {exc.strerror or exc}. "
            "Choose another file with --out."
        ) from exc
    log.info("Wrote audit report of %d records to %s", stats.n, out)
    return out
