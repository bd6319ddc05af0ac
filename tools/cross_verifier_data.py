"""Training pairs for the cross-encoder support check (``tools/train_cross_verifier.py``).

Every pair is (context, claim, question, label, kind).  Sources, all of them data the
project may tune on (never the report books of ``bench/books.py``):

* the hand-written textbook pairs (``bench/grounding_textbook.jsonl``), tune half for
  training and test half for choosing the threshold, and the tune books' pairs of
  ``bench/verifier_pairs.jsonl`` (threshold only);
* HaluEval QA and RGB tune halves (``../shared/eval/grounding``);
* SQuAD 2.0 (``../shared/eval/qa/squad2_dev_half.json``): a question with its answer, or
  the sentence holding the answer, over its paragraph = supported; an unanswerable
  question with its plausible answer, or a sentence of another paragraph of the article =
  unsupported;
* pairs made from the tune books' own passages (:func:`book_pairs`): the sentence, a
  faithful rewrite, a shortened sentence or two neighbours joined = supported; a negation
  put in or taken out, a number changed, a term replaced by another of the page, two
  terms exchanged, an opposite, the sentence with a claim from elsewhere added, a
  sentence of another part of the book, or the passage without the sentence =
  unsupported;
* the labelled tune-book questions of ``bench/questions/train`` (:func:`fresh_pairs`): a
  teacher's answer, in its own words, over the page that holds the sentences it
  paraphrases = supported; over the same page, another question's answer from elsewhere in
  the book, or the answer with a negation, a number or two terms changed = unsupported;
* public entailment and paraphrase sets (:func:`paws`, :func:`scitail`, :func:`sick`),
  read from a directory given by ``--extra-data`` of the training script or the
  ``BOOKREADER_XDATA`` environment variable (never copied into the repository; a missing
  file is skipped with a note).  The first sentence or premise is the context, the
  second sentence or hypothesis the claim; paraphrase / entailment = supported,
  non-paraphrase / neutral / contradiction = unsupported.  A context is padded with one
  to three unrelated sentences of the same set, in a random order, so that the model
  learns to find the supporting sentence inside a passage as in the app:

  - ``paws/dev.tsv`` and ``paws/test.tsv``: PAWS-Wiki labeled (final), from
    https://storage.googleapis.com/paws/english/paws_wiki_labeled_final.tar.gz
    (github.com/google-research-datasets/paws); licence: "The dataset may be freely
    used for any purpose, although acknowledgement of Google LLC ("Google") as the data
    source would be appreciated."  Pairs of Wikipedia sentences with the same words,
    paraphrases or not: the non-paraphrases exchange names, numbers and roles.
  - ``scitail/scitail_1.0_train.tsv`` (optional): SciTail v1.1 tsv format, from
    https://allenai.org/data/scitail; licence Apache-2.0.  Science sentences and
    statements they entail or not (neutral pairs share many words).
  - ``sick/SICK_train.txt`` (opt-in, ``--sick``): SICK, from
    https://marcobaroni.org/composes/sick.html; licence CC BY-NC-SA 3.0 (non-commercial:
    not used by ``make train-cross-verifier``).

  MRPC (Microsoft Research Paraphrase Corpus) is not read: its licence terms are not
  clearly open.
"""

from __future__ import annotations

import json
import os
import random
import re
import sys
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "bench"))

import books as book_split  # noqa: E402
import grounding as gb  # noqa: E402

EVAL_DIR = gb.EVAL_DIR
RGB = EVAL_DIR / "grounding" / "rgb_en_fact.jsonl"
SQUAD = EVAL_DIR / "qa" / "squad2_dev_half.json"
#: Default directory of the public entailment / paraphrase files (see the docstring).
XDATA_ENV = "BOOKREADER_XDATA"


class Example(NamedTuple):
    context: str
    claim: str
    question: str
    label: bool
    kind: str
    source: str


def _pairs(pairs, source: str) -> list[Example]:
    return [Example(p.context, p.answer, p.question, p.supported, p.kind, source)
            for p in pairs]


def present(path: Path, what: str) -> bool:
    if path.exists():
        return True
    print(f"note: {what} ({path}) is absent; training goes on without it", file=sys.stderr)
    return False


# --- the project's and the public sets ---------------------------------------------------
def textbook(split: str) -> list[Example]:
    if not present(gb.BOOKS_DIR, "the evaluation books"):
        return []
    return _pairs(gb.load_textbook(gb.TEXTBOOK_PAIRS, split), f"textbook_{split}")


def verifier_tune() -> list[Example]:
    import verifier

    return _pairs(verifier.load_pairs(verifier.PAIRS, "tune"), "verifier_tune")


def halueval_tune() -> list[Example]:
    if not present(gb.DEFAULT_PAIRS, "HaluEval QA"):
        return []
    return _pairs(gb.load_pairs(gb.DEFAULT_PAIRS, "tune"), "halueval")


def rgb_tune() -> list[Example]:
    if not present(RGB, "RGB"):
        return []
    return _pairs(gb.load_pairs(RGB, "tune"), "rgb")


def squad(n_paragraphs: int, rng: random.Random) -> list[Example]:
    """Up to four pairs a sampled paragraph (see the module docstring)."""
    if not present(SQUAD, "SQuAD 2.0"):
        return []
    from bookreader.core.sentences import split_sentences

    articles = json.loads(SQUAD.read_text(encoding="utf-8"))["data"]
    paragraphs = [(a, p) for a in articles for p in a["paragraphs"]]
    out: list[Example] = []
    for art, par in rng.sample(paragraphs, min(n_paragraphs, len(paragraphs))):
        ctx = par["context"]
        answerable = [q for q in par["qas"] if not q["is_impossible"] and q["answers"]]
        impossible = [q for q in par["qas"] if q["is_impossible"] and q.get("plausible_answers")]
        if answerable:
            q = rng.choice(answerable)
            ans = q["answers"][0]
            out.append(Example(ctx, ans["text"], q["question"], True, "qa", "squad"))
            sents = split_sentences(ctx)
            pos = 0
            for s in sents:
                at = ctx.find(s, pos)
                if at <= ans["answer_start"] < at + len(s) + 1 and rng.random() < 0.5:
                    out.append(Example(ctx, s, "", True, "sentence", "squad"))
                    break
                pos = max(pos, at)
        if impossible:
            q = rng.choice(impossible)
            out.append(Example(ctx, q["plausible_answers"][0]["text"], q["question"], False,
                               "plausible", "squad"))
        others = [p for p in art["paragraphs"] if p is not par]
        if others and rng.random() < 0.5:
            s = rng.choice(split_sentences(rng.choice(others)["context"]))
            if len(s.split()) >= 6:
                out.append(Example(ctx, s, "", False, "other_paragraph", "squad"))
    return out


# --- pairs made from the tune books' passages ---------------------------------------------
_AUX = re.compile(r"\b(is|are|was|were|can|will|should|must|does|do|did|has|have|may|"
                  r"could|would)\b(?! not\b)")
_NEG = re.compile(r"\b(is|are|was|were|does|do|did|has|have|should|must|will|would|could)"
                  r" not\b|\bcannot\b|\b(\w+)n't\b|\bnever\b")
_NUMBER = re.compile(r"\b\d+(?:\.\d+)?\b")
_PAREN = re.compile(r"\s*\([^()]{1,80}\)")
_LEAD = re.compile(r"^(For example|For instance|In this case|However|In other words|Also|"
                   r"Similarly|In fact|Of course|In general|Thus|So|Therefore|Now),\s+")
_COND = re.compile(r"^(If|When|Whenever|Because|Since|Although|While) ([^,]{8,120}), (.+)\.$")
_WORD = re.compile(r"[A-Za-z][a-z]{4,}")
#: Ordinary words and a word of the same meaning (faithful rewrites).
SAME = {
    "uses": "employs", "use": "employ", "shows": "demonstrates", "show": "demonstrate",
    "important": "significant", "often": "frequently", "large": "big", "big": "large",
    "small": "little", "however": "but", "begin": "start", "begins": "starts",
    "start": "begin", "starts": "begins", 
    "quickly": "fast", "usually": "typically", "typically": "usually", "simple": "basic",
    "difficult": "hard", "hard": "difficult", "many": "numerous", "need": "require",
    "needs": "requires", "requires": "needs", "require": "need", "provides": "gives",
    "provide": "give", "gives": "provides", "create": "make", "creates": "makes",
    "makes": "creates", "called": "known as", "whole": "entire", "entire": "whole",
    "helps": "assists", "allows": "lets", "lets": "allows", "change": "modify",
    "changes": "modifies", "describe": "explain", "describes": "explains",
    "explains": "describes", "means": "signifies", "about": "roughly", 
    "obtain": "get", "get": "obtain", "compute": "calculate", "computes": "calculates",
    "calculate": "compute", "produces": "generates", "generates": "produces",
    "common": "frequent", "several": "a number of",
}
#: Words and their opposites (contradictions).
OPPOSITE = {
    "increase": "decrease", "decrease": "increase", "increases": "decreases",
    "decreases": "increases", "more": "less", "less": "more", "larger": "smaller",
    "smaller": "larger", "before": "after", "after": "before", "first": "last",
    "last": "first", "always": "never", "true": "false", "false": "true", "higher": "lower",
    "lower": "higher", "positive": "negative", "negative": "positive", "maximum": "minimum",
    "minimum": "maximum", "faster": "slower", "slower": "faster", "inside": "outside",
    "outside": "inside", "easy": "difficult", "same": "different", "different": "same",
    "required": "optional", "optional": "required",
    "input": "output", "output": "input", "above": "below", "below": "above", "most": "least", "least": "most",
}


def _is_prose(s: str) -> bool:
    n = len(s.split())
    if not 6 <= n <= 45 or not s[0].isupper() or not s.endswith("."):
        return False
    letters = sum(c.isalpha() or c.isspace() for c in s)
    return letters / len(s) > 0.85 and not re.search(r"[={}<>_\\]|\.\.\.", s)


def _sub_words(s: str, table: dict[str, str], rng: random.Random, at_most: int) -> str:
    hits = [m for m in re.finditer(r"\b[a-z]+\b", s) if m.group() in table]
    rng.shuffle(hits)
    for m in sorted(hits[:at_most], key=lambda m: -m.start()):
        s = s[:m.start()] + table[m.group()] + s[m.end():]
    return s


def rewrite(s: str, rng: random.Random) -> str:
    """A faithful rewrite: parentheticals and lead-ins dropped, a condition moved to the
    end, a few words replaced by words of the same meaning."""
    out = _PAREN.sub("", s)
    out = _LEAD.sub("", out)
    out = out[0].upper() + out[1:]
    m = _COND.match(out)
    if m and rng.random() < 0.7:
        out = f"{m.group(3)[0].upper()}{m.group(3)[1:]} {m.group(1).lower()} {m.group(2)}."
    return _sub_words(out, SAME, rng, 3)


def negate(s: str) -> str | None:
    """``s`` with its first negation taken out, or a negation put after its first
    auxiliary verb; None when it has neither."""
    m = _NEG.search(s)
    if m:
        t = m.group()
        repl = ("can" if t == "cannot" else "always" if t == "never"
                else t.replace(" not", "") if " not" in t else t[:-3])
        return s[:m.start()] + repl + s[m.end():]
    m = _AUX.search(s)
    if not m:
        return None
    aux = m.group()
    return s[:m.start()] + ("cannot" if aux == "can" else f"{aux} not") + s[m.end():]


def swap_number(s: str, rng: random.Random) -> str | None:
    nums = list(_NUMBER.finditer(s))
    if not nums:
        return None
    m = rng.choice(nums)
    v = m.group()
    new = str(int(float(v)) + rng.choice([1, 2, 3, 5, 10])) if "." not in v \
        else f"{float(v) * rng.choice([2, 0.5, 10]):g}"
    return s[:m.start()] + new + s[m.end():]


def swap_term(s: str, pool: list[str], rng: random.Random) -> str | None:
    """A content word of ``s`` replaced by another content word of the page."""
    own = {w.lower() for w in _WORD.findall(s)}
    cands = [m for m in _WORD.finditer(s) if m.group().islower()]
    others = sorted({w for w in pool if w.islower() and w not in own})
    if not cands or not others:
        return None
    m = rng.choice(cands)
    ends = [w for w in others if w[-2:] == m.group()[-2:]] or others
    return s[:m.start()] + rng.choice(ends) + s[m.end():]


def exchange_terms(s: str, rng: random.Random) -> str | None:
    """Two content words of ``s`` exchanged (roles swapped)."""
    ms = [m for m in _WORD.finditer(s) if m.group().islower()]
    pairs = [(a, b) for i, a in enumerate(ms) for b in ms[i + 1:] if a.group() != b.group()]
    if not pairs:
        return None
    a, b = rng.choice(pairs)
    return s[:a.start()] + b.group() + s[a.end():b.start()] + a.group() + s[b.end():]


def opposite(s: str, rng: random.Random) -> str | None:
    out = _sub_words(s, OPPOSITE, rng, 1)
    return out if out != s else None


def shorten(s: str) -> str | None:
    """The main clause before a ", which"/", and"/", so" part (still supported)."""
    m = re.search(r", (which|and|so|but|because|since|where|while) ", s)
    if not m or len(s[:m.start()].split()) < 6:
        return None
    return s[:m.start()] + "."


def join(a: str, b: str, rng: random.Random) -> str:
    """Two neighbouring sentences as one (a synthesis)."""
    a, b = rewrite(a, rng), rewrite(b, rng)
    glue = rng.choice([", and ", "; ", ", so " if rng.random() < 0.3 else ", and "])
    return a[:-1] + glue + b[0].lower() + b[1:]


def _book_passages(stem: str) -> list[tuple[int, list[str]]]:
    """(page, prose sentences in reading order) of every page with a run of prose."""
    from bookreader.core.pdf import PdfBook
    from bookreader.core.sentences import split_sentences

    book = PdfBook.open(gb.BOOKS_DIR / f"{stem}.pdf")
    out = []
    try:
        for i in range(book.page_count):
            sents = [" ".join(s.split()) for s in split_sentences(book.page(i).text)]
            run: list[str] = []
            for s in sents + [""]:
                if s and _is_prose(s):
                    run.append(s)
                    continue
                if len(run) >= 3:
                    out.append((i, run))
                run = []
    finally:
        book.close()
    return out


def book_pairs(per_book: int, rng: random.Random, targets: int = 2) -> list[Example]:
    """Pairs made from ``per_book`` passages of each tune book (for each of ``targets``
    sentences of a passage, one supported claim and one unsupported)."""
    out: list[Example] = []
    for stem in book_split.TUNE:
        if not (gb.BOOKS_DIR / f"{stem}.pdf").exists():
            print(f"note: {stem}.pdf is absent; no pairs from it", file=sys.stderr)
            continue
        runs = _book_passages(stem)
        all_sents = [(p, s) for p, run in runs for s in run]
        for page, run in rng.sample(runs, min(per_book, len(runs))):
            lo = rng.randrange(0, max(1, len(run) - 3))
            sents = run[lo:lo + rng.randint(3, 6)]
            ctx = " ".join(sents)
            for k in rng.sample(range(len(sents)), min(targets, len(sents))):
                out += _passage_pairs(stem, page, sents, ctx, k, all_sents, rng)
    return out


def _passage_pairs(stem: str, page: int, sents: list[str], ctx: str, k: int,
                   all_sents: list[tuple[int, str]], rng: random.Random) -> list[Example]:
    """One supported and one unsupported claim about sentence ``k`` of a passage."""
    out: list[Example] = []
    s = sents[k]
    pool = _WORD.findall(ctx)
    pos_kind = rng.choices(["exact", "rewrite", "short", "join"], [1, 4, 1, 3])[0]
    claim = {"exact": s, "rewrite": rewrite(s, rng), "short": shorten(s) or rewrite(s, rng),
             "join": join(sents[k - 1], s, rng) if k else rewrite(s, rng)}[pos_kind]
    out.append(Example(ctx, claim, "", True, f"book_{pos_kind}", stem))
    far = [x for p, x in all_sents if abs(p - page) > 20]
    for neg_kind in rng.sample(["negation", "number", "term", "exchange", "opposite",
                                "beyond", "other", "removed", "negation"], 4):
        neg, c = None, ctx
        base = rewrite(s, rng) if rng.random() < 0.5 else s
        if neg_kind == "negation":
            neg = negate(base)
        elif neg_kind == "number":
            neg = swap_number(base, rng)
        elif neg_kind == "term":
            neg = swap_term(base, pool, rng)
        elif neg_kind == "exchange":
            neg = exchange_terms(base, rng)
        elif neg_kind == "opposite":
            neg = opposite(base, rng)
        elif neg_kind == "beyond" and far:
            extra = rng.choice(far)
            neg = base[:-1] + rng.choice([", because ", ", and ", ", which means "]) \
                + extra[0].lower() + extra[1:]
        elif neg_kind == "other" and far:
            neg = rewrite(rng.choice(far), rng)
        elif neg_kind == "removed" and len(sents) > 3:
            neg, c = base, " ".join(sents[:max(0, k - 1)] + sents[k + 2:])
        if neg and neg != s:
            out.append(Example(c, neg, "", False, f"book_{neg_kind}", stem))
            break
    return out


FRESH_DIR = ROOT / "bench" / "questions" / "train"


def fresh_pairs(rng: random.Random, per_book: int = 150) -> list[Example]:
    """Pairs from the labelled tune-book questions: each gold answer (a paraphrase of the
    answer sentences) over its page = supported; over the same page another question's
    gold answer from at least three pages away, or the gold answer negated, with a number
    changed or with two terms exchanged = unsupported."""
    from bookreader.core.pdf import PdfBook

    out: list[Example] = []
    for stem in book_split.TUNE:
        path = FRESH_DIR / f"{stem}.jsonl"
        pdf = gb.BOOKS_DIR / f"{stem}.pdf"
        if not (path.exists() and pdf.exists()):
            print(f"note: {path.name} or {pdf.name} is absent; no pairs from it", file=sys.stderr)
            continue
        rows = [json.loads(x) for x in path.read_text(encoding="utf-8").splitlines() if x]
        book = PdfBook.open(pdf)
        try:
            pages = {p: " ".join(book.page(p).text.split())
                     for r in rows for p in r["gold_pages"][:2]}
        finally:
            book.close()
        for r in rng.sample(rows, min(per_book, len(rows))):
            ctx = " ".join(pages[p] for p in r["gold_pages"][:2])
            q, gold = r["question"], r["gold"]
            out.append(Example(ctx, gold, q, True, "fresh_paraphrase", stem))
            far = [x for x in rows if min(abs(a - b) for a in x["gold_pages"]
                                          for b in r["gold_pages"]) >= 3]
            kinds = ["other", "negation", "number", "exchange"]
            rng.shuffle(kinds)
            for kind in kinds:
                neg = None
                if kind == "other" and far:
                    neg = rng.choice(far)["gold"]
                elif kind == "negation":
                    neg = negate(gold)
                elif kind == "number":
                    neg = swap_number(gold, rng)
                elif kind == "exchange":
                    neg = exchange_terms(gold, rng)
                if neg and neg != gold:
                    out.append(Example(ctx, neg, q, False, f"fresh_{kind}", stem))
                    break
    return out


# --- public entailment and paraphrase sets --------------------------------------------
_DETOK = [(re.compile(r"\s+([,.;:!?%)\]])"), r"\1"), (re.compile(r"([(\[$])\s+"), r"\1"),
          (re.compile(r"\s+('s|n't|'re|'ve|'ll|'d|')\b"), r"\1"),
          (re.compile(r"``\s*|\s*''"), '"'), (re.compile(r"\s+--\s+"), "-")]


def detokenize(s: str) -> str:
    """Tokenized text (" , " and "`` ''") as ordinary prose."""
    s = " ".join(s.split())
    for pat, repl in _DETOK:
        s = pat.sub(repl, s)
    return s


def xdata_dir(given: Path | None = None) -> Path | None:
    """The directory of the public sets: ``given``, else ``$BOOKREADER_XDATA``, else None
    (with a note)."""
    if given is None and os.environ.get(XDATA_ENV):
        given = Path(os.environ[XDATA_ENV])
    if given is None:
        print(f"note: no public entailment/paraphrase data (--extra-data or ${XDATA_ENV}); "
              "training goes on without it", file=sys.stderr)
    return given


def _words(s: str) -> set[str]:
    return {w.lower() for w in _WORD.findall(s)}


def _padded(premise: str, claim: str, pool: list[str], rng: random.Random) -> str:
    """``premise`` among one to three sentences of ``pool`` that share few words with the
    claim (so none of them supports or contradicts it), in a random order."""
    own = _words(claim) | _words(premise)
    others: list[str] = []
    for _ in range(12):
        if len(others) >= rng.randint(1, 3):
            break
        s = rng.choice(pool)
        w = _words(s)
        if s != premise and len(w & own) <= max(1, len(w) // 10):
            others.append(s)
    sents = others + [premise]
    rng.shuffle(sents)
    return " ".join(sents)


def _balanced(rows: list[tuple[str, str, bool, str]], n: int, source: str,
              rng: random.Random) -> list[Example]:
    """Up to ``n`` pairs, half supported, contexts padded (see :func:`_padded`)."""
    pool = sorted({r[0] for r in rows})
    pos = [r for r in rows if r[2]]
    neg = [r for r in rows if not r[2]]
    rng.shuffle(pos)
    rng.shuffle(neg)
    out = []
    for premise, claim, label, kind in pos[:n // 2] + neg[:n - min(n // 2, len(pos))]:
        ctx = _padded(premise, claim, pool, rng) if rng.random() < 0.8 else premise
        out.append(Example(ctx, claim, "", label, kind, source))
    return out


def paws(root: Path | None, n: int, rng: random.Random) -> list[Example]:
    """PAWS-Wiki pairs: paraphrase = supported, same words in other roles = unsupported."""
    files = [root / "paws" / f for f in ("dev.tsv", "test.tsv")] if root else []
    rows: list[tuple[str, str, bool, str]] = []
    for f in files:
        if not present(f, "PAWS"):
            continue
        for line in f.read_text(encoding="utf-8").splitlines():
            cols = line.split("\t")
            if len(cols) != 4 or cols[3] not in ("0", "1"):
                continue  # the header, a damaged line
            a, b = detokenize(cols[1]), detokenize(cols[2])
            if a == b:
                continue
            if rng.random() < 0.5:
                a, b = b, a
            rows.append((a, b, cols[3] == "1", "paraphrase" if cols[3] == "1" else "swapped"))
    return _balanced(rows, n, "paws", rng) if rows else []


def scitail(root: Path | None, n: int, rng: random.Random) -> list[Example]:
    """SciTail pairs: entails = supported, neutral = unsupported."""
    f = root / "scitail" / "scitail_1.0_train.tsv" if root else None
    if f is None or not present(f, "SciTail"):
        return []
    rows = []
    for line in f.read_text(encoding="utf-8").splitlines():
        cols = line.split("\t")
        if len(cols) == 3 and cols[2] in ("entails", "neutral"):
            rows.append((" ".join(cols[0].split()), " ".join(cols[1].split()),
                         cols[2] == "entails", cols[2]))
    return _balanced(rows, n, "scitail", rng)


def sick(root: Path | None, n: int, rng: random.Random) -> list[Example]:
    """SICK pairs (non-commercial licence: opt-in): entailment = supported, neutral and
    contradiction = unsupported; sentence A is the context."""
    f = root / "sick" / "SICK_train.txt" if root else None
    if f is None or not present(f, "SICK"):
        return []
    rows = []
    for line in f.read_text(encoding="utf-8").splitlines()[1:]:
        cols = line.split("\t")
        if len(cols) >= 5 and cols[4] in ("ENTAILMENT", "NEUTRAL", "CONTRADICTION"):
            a, b = cols[1].strip(), cols[2].strip()
            rows.append((a[0].upper() + a[1:] + ".", b[0].upper() + b[1:] + ".",
                         cols[4] == "ENTAILMENT", cols[4].lower()))
    return _balanced(rows, n, "sick", rng)
