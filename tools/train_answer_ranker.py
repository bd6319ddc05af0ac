"""Train the learned answer ranker (``make train-answer-ranker``).

Usage::

    python tools/train_answer_ranker.py [--dumps build/answer_ranker] [--squad-questions 1500]
        [--out src/bookreader/resources/answer_ranker.safetensors] [--epochs 1] [--dry-run]

The ranker reads a question and one sentence of the context (with the heading it stands
under) and gives the probability that the sentence *states the answer*, not merely shares
the question's words.  It is :class:`bookreader.core.cross_verifier.CrossEncoder` (the
bundled MiniLM with low-rank adapters and a small head), the sentence as the first segment
and the question as the second.  Pairs, all from data the project may tune on:

* SQuAD 2.0 (``../shared/eval/qa/squad2_dev_half.json``): an answerable question and the
  sentence of its paragraph that holds the answer = states the answer; two other sentences
  of the paragraph, those sharing most words with the question first = does not;
* the tune books of ``bench/books.py``: the candidates the extractive answer ranked for
  each in-scope bench question (dumped by ``tools/answer_ranker_data.py``).  A sentence
  holding at least :data:`POSITIVE_SHARE` of the gold answer's content words that the
  question does not already hold (and at least 0.7 of the best candidate's share) states the
  answer; one holding at most :data:`NEGATIVE_SHARE` does not, however many of the
  question's own words it repeats.  The gold answers are full sentences written by hand.

Seeds are fixed, examples in a fixed order, two threads.  Writes only the trained
parameters (fp16 safetensors) and prints the SHA-256 to pin in
``core/llm/answer_ranker.py``.  Never downloads anything.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import sys
import time
from pathlib import Path
from typing import NamedTuple

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "src"))
sys.path.insert(0, str(ROOT / "tools"))
sys.path.insert(0, str(ROOT / "bench"))

import books  # noqa: E402  (bench/books.py: the book-level split)

SEED = 4321
SQUAD = ROOT.parent / "shared" / "eval" / "qa" / "squad2_dev_half.json"
DEFAULT_DUMPS = ROOT / "build" / "answer_ranker"
DEFAULT_OUT = ROOT / "src" / "bookreader" / "resources" / "answer_ranker.safetensors"
#: Least share of the gold answer's new content words for a sentence to state the answer.
POSITIVE_SHARE = 0.4
#: Most share for a sentence to count as not stating it.
NEGATIVE_SHARE = 0.1


class Pair(NamedTuple):
    sentence: str  # as the ranker reads it: heading, then the sentence
    question: str
    label: bool
    source: str


def novel_share(sentence: str, question: str, gold: str) -> float:
    """Share of the gold answer's content words, beyond those of the question, that the
    sentence holds (all of the gold's words when the question holds every one)."""
    from bookreader.core.sentences import content_terms

    want = set(content_terms(gold))
    new = want - set(content_terms(question)) or want
    if not new:
        return 0.0
    return len(new & set(content_terms(sentence))) / len(new)


def book_pairs(dumps: Path, stems, rng: random.Random, per_question: int = 4) -> list[Pair]:
    """Pairs from the dumped candidates of the given books' bench questions."""
    from bookreader.core.llm.answer_ranker import ranker_text

    out: list[Pair] = []
    for stem in stems:
        path = dumps / f"{stem}.jsonl"
        if not path.is_file():
            print(f"no dump {path}: run tools/answer_ranker_data.py --split tune first",
                  file=sys.stderr)
            continue
        for line in path.read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            if not row["gold"] or not row["candidates"]:
                continue
            cands = row["candidates"]
            shares = [novel_share(c["sentence"], row["question"], row["gold"]) for c in cands]
            best = max(shares)
            pos = [c for c, s in zip(cands, shares)
                   if s >= POSITIVE_SHARE and s >= 0.7 * best]
            neg = [c for c, s in zip(cands, shares) if s <= NEGATIVE_SHARE]
            neg.sort(key=lambda c: -c["score"])  # the hand ranking's favourites: hardest
            for c in pos[:2]:
                out.append(Pair(ranker_text(c["sentence"], c["heading"]), row["question"],
                                True, "book"))
            for c in neg[:per_question]:
                out.append(Pair(ranker_text(c["sentence"], c["heading"]), row["question"],
                                False, "book"))
    return out


def squad_pairs(n_questions: int, rng: random.Random) -> list[Pair]:
    """The answer's sentence and two others of its paragraph, per sampled question."""
    if not SQUAD.is_file():
        print(f"{SQUAD} not found: SQuAD pairs skipped (../shared/eval holds it)",
              file=sys.stderr)
        return []
    from bookreader.core.llm.answer_ranker import ranker_text
    from bookreader.core.sentences import content_terms, split_sentences

    items = []
    for art in json.loads(SQUAD.read_text(encoding="utf-8"))["data"]:
        title = art["title"].replace("_", " ")
        for par in art["paragraphs"]:
            for q in par["qas"]:
                if not q["is_impossible"] and q["answers"]:
                    items.append((title, par["context"], q))
    out: list[Pair] = []
    for title, ctx, q in rng.sample(items, min(n_questions, len(items))):
        sents = split_sentences(ctx)
        start = q["answers"][0]["answer_start"]
        pos, at, hit = 0, 0, None
        spans = []
        for s in sents:
            at = ctx.find(s, pos)
            if at < 0:
                at = pos
            spans.append((at, at + len(s)))
            pos = at + len(s)
        for s, (a, b) in zip(sents, spans):
            if a <= start < b + 1:
                hit = s
                break
        if hit is None or len(sents) < 2:
            continue
        q_terms = set(content_terms(q["question"]))
        others = [s for s in sents if s != hit and len(s.split()) >= 5]
        others.sort(key=lambda s: -len(q_terms & set(content_terms(s))))
        out.append(Pair(ranker_text(hit, title), q["question"], True, "squad"))
        for s in others[:2]:
            out.append(Pair(ranker_text(s, title), q["question"], False, "squad"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--dumps", type=Path, default=DEFAULT_DUMPS)
    ap.add_argument("--out", type=Path, default=DEFAULT_OUT)
    ap.add_argument("--squad-questions", type=int, default=1500)
    ap.add_argument("--book-repeat", type=int, default=2,
                    help="times the book pairs are seen per epoch (fewer than SQuAD's)")
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--batch", type=int, default=16)
    ap.add_argument("--lr", type=float, default=1e-3)
    ap.add_argument("--hold-out", action="append",
                    help="a tune book left out of training, to measure on (cross-validation)")
    ap.add_argument("--dry-run", action="store_true", help="print the data, train nothing")
    args = ap.parse_args(argv)

    import torch
    from safetensors.torch import save as save_safetensors
    from train_cross_verifier import batches, predict
    from transformers import AutoTokenizer

    from bookreader.core.cross_verifier import FIRST_ADAPTED, RANK, CrossEncoder
    from bookreader.core.embedding import find_model_dir
    from bookreader.core.llm.answer_ranker import MAX_TOKENS

    torch.set_num_threads(2)
    torch.manual_seed(SEED)
    torch.use_deterministic_algorithms(True)
    rng = random.Random(SEED)
    t0 = time.time()
    held_out = args.hold_out or []
    unknown = set(held_out) - set(books.TUNE)
    if unknown:
        ap.error(f"--hold-out takes tune books ({', '.join(books.TUNE)}), not {unknown}")
    book = book_pairs(args.dumps, [b for b in books.TUNE if b not in held_out], rng)
    squad = squad_pairs(args.squad_questions, rng)
    held = book_pairs(args.dumps, held_out, rng)
    train = book * args.book_repeat + squad
    rng.shuffle(train)
    print(f"{len(train)} training pairs ({sum(p.label for p in train)} state the answer; "
          f"{len(book)} from the tune books, {len(squad)} from SQuAD); "
          f"{len(held)} held out; {time.time() - t0:.0f} s", flush=True)
    if args.dry_run:
        for p in random.Random(1).sample(train, min(30, len(train))):
            print(f"[{p.source} {p.label}] {p.question}\n   << {p.sentence[:200]}")
        return 0
    model_dir = find_model_dir()
    tok = AutoTokenizer.from_pretrained(str(model_dir))
    model = CrossEncoder(model_dir, RANK)

    def encode(pairs):
        enc = tok([p.sentence for p in pairs], [p.question for p in pairs],
                  truncation="longest_first", max_length=MAX_TOKENS)
        return list(zip(enc["input_ids"], enc["token_type_ids"]))

    enc_train, enc_held = encode(train), encode(held)
    params = [p for p in model.parameters() if p.requires_grad]
    head = [p for n, p in model.named_parameters() if p.requires_grad and n.startswith("head")]
    rest = [p for n, p in model.named_parameters()
            if p.requires_grad and not n.startswith("head")]
    opt = torch.optim.AdamW([{"params": head, "lr": 3 * args.lr}, {"params": rest}],
                            lr=args.lr, weight_decay=0.01)
    steps = int(len(train) / args.batch * args.epochs + 0.999)
    warm = max(1, steps // 10)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda s: min((s + 1) / warm, max(0.0, (steps - s) / max(1, steps - warm))))
    loss_fn = torch.nn.BCEWithLogitsLoss()
    labels = [p.label for p in train]
    step, t1, avg = 0, time.time(), 0.0
    model.train()
    while step < steps:
        for _, ids, mask, types, y in batches(enc_train, labels, args.batch, rng):
            loss = loss_fn(model(ids, mask, types), y)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(params, 1.0)
            opt.step()
            sched.step()
            opt.zero_grad()
            step += 1
            avg = 0.95 * avg + 0.05 * loss.item() if step > 1 else loss.item()
            if step % 20 == 0 or step == steps:
                print(f"step {step}/{steps} loss {avg:.3f} {time.time() - t1:.0f} s",
                      flush=True)
            if step >= steps:
                break
    if held:
        probs = predict(model, enc_held)
        pos = [p for p, x in zip(probs, held) if x.label]
        neg = [p for p, x in zip(probs, held) if not x.label]
        auc = sum(a > b for a in pos for b in neg) / max(1, len(pos) * len(neg))
        print(f"held-out tune book pairs ({', '.join(held_out)}): {len(pos)} + / {len(neg)} -, AUC {auc:.3f}")
    state = {k: v.to(torch.float16).contiguous() for k, v in model.trained_state().items()}
    blob = save_safetensors(state, metadata={
        "rank": str(RANK), "first_adapted": str(FIRST_ADAPTED), "max_tokens": str(MAX_TOKENS),
        "base": "all-MiniLM-L6-v2", "seed": str(SEED), "train_pairs": str(len(train)),
        "steps": str(steps)})
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_bytes(blob)
    print(f"wrote {args.out} ({len(blob) / 1e6:.2f} MB), training "
          f"{(time.time() - t1) / 60:.1f} min, total {(time.time() - t0) / 60:.1f} min")
    print(f"SHA-256 {hashlib.sha256(blob).hexdigest()}  (pin as SHA256 in "
          "core/llm/answer_ranker.py)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
