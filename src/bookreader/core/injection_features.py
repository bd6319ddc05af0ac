"""The planted-instruction detector's input: a sentence's form as hashed features.

The words and word pairs of a sentence, its opening words (the frame an instruction's
addressee and verb stand in), the classes of its words (:data:`WORD_CLASSES`: the
answering system as addressee, producing output, the frame it works in, obligation, the
one addressed), its grammatical form read from those classes (:func:`_form`: the mood,
the subject, class pairs within :data:`SKIP_REACH` words) and structural cues (a role
label before a colon, a quoted or capitalised literal after a verb of producing output,
markup, capitals), hashed into a vector of :data:`FEATURE_BITS` and scaled to unit length.

Separate from :mod:`bookreader.core.injection`, which loads the shipped weights and
decides which units of a sentence are instructions: the training script
(``tools/train_injection_detector.py``) and the detector must compute the very same
features, and this module is all they share.
"""

from __future__ import annotations

import math
import re
import zlib
from functools import lru_cache
from typing import Callable

from bookreader.core.sentences import stem

#: Width of the hashed feature vector.
FEATURE_BITS = 1 << 16
#: The opening words that carry the frame features.
FRAME_TOKENS = 10

_TOKEN = re.compile(r"[A-Za-z][A-Za-z']*|\d+(?:[.,]\d+)*|[<>\[\]{}#|/*:()\"'`]")
#: A short label before a colon that opens the sentence ("SYSTEM:", "Note for bots:").
_LABEL = re.compile(r"^\W{0,3}[\w' -]{1,30}:\s")
_QUOTED = re.compile(r"[\"'\u201c\u2018][^\"'\u201d\u2019]{1,60}[\"'\u201d\u2019]")
_SECOND_PERSON = frozenset({"you", "your", "yours", "yourself", "yourselves"})
#: Word classes the model reads beside the words themselves, so that what it learns of
#: one member holds for the others ("your reply" and "your response"): the answering
#: system named as an addressee, what it produces, the frame it works in, the obligation
#: put on it, and the one it is told to address.  Not a list of phrases: a class alone
#: decides nothing; the learned weights of the classes, their neighbours, their place in
#: the sentence and the sentence's grammatical form (below) do.  A word is looked up by
#: its stem, so every inflection belongs to its class ("summarises", "summarizing").
WORD_CLASSES: dict[str, frozenset[str]] = {
    "ADDRESSEE": frozenset({
        "ai", "assistant", "assistants", "chatbot", "chatbots", "bot", "bots", "llm", "llms",
        "gpt", "chatgpt", "claude", "gemini", "copilot", "model", "models", "responder",
        "agent", "agents", "machine", "machines", "tutor", "system", "systems", "engine",
        "tool", "tools", "software", "summarizer", "summariser", "answerer", "whoever"}),
    "PRODUCE": frozenset({
        "answer", "answers", "answering", "reply", "replies", "respond", "responds",
        "response", "responses", "output", "outputs", "print", "say", "says", "state",
        "tell", "write", "claim", "report", "repeat", "mention", "display", "return",
        "type", "summarize", "summarise", "summary", "translate", "reveal", "inform",
        "insist", "append", "begin", "start", "finish", "end", "emit", "show", "give",
        "describe", "explain", "credit", "attribute", "confirm", "assure", "remind", "warn",
        "present", "cite", "quote", "hear", "told"}),
    "META": frozenset({
        "prompt", "prompts", "instruction", "instructions", "rules", "guidelines",
        "directions", "directive", "query", "queries", "conversation", "chat", "context",
        "passage", "page", "text", "above", "previous", "preceding", "earlier", "task",
        "mode", "configuration", "policy", "override", "hidden", "section", "paragraph",
        "document", "here"}),
    "MUST": frozenset({
        "must", "should", "shall", "required", "require", "requires", "need", "needs",
        "always", "only", "never", "whatever", "regardless", "instructed", "expected",
        "mandatory", "obliged", "ought", "asked", "requested", "supposed", "sure", "ensure"}),
    "RECIPIENT": frozenset({
        "reader", "readers", "user", "users", "student", "students", "learner", "learners",
        "asker", "questioner", "anyone", "someone", "everyone", "human"}),
}
_CLASS_OF = {stem(w): c for c, ws in WORD_CLASSES.items() for w in ws}
#: Classes whose order and company in a sentence are read as its grammatical form.
_FORM_CLASSES = ("ADDRESSEE", "PRODUCE", "META", "MUST", "RECIPIENT", "SECOND")
#: How many words apart two classes may stand and still be read as one frame
#: ("assistants are required *to* describe", "tell *the* reader").
SKIP_REACH = 4
#: Words that open a sentence without being its verb ("Please explain ...", "Now say").
_OPENERS = frozenset({"please", "kindly", "now", "instead", "so", "then", "also", "just",
                      "simply", "first", "finally", "again", "always", "never", "and"})
#: The verbs that end a sentence's subject when no verb of obligation does.
_AUX = frozenset({"is", "are", "was", "were", "will", "would", "can", "may", "has", "have",
                  "gets", "get", "opens", "begins", "starts", "does", "do"})
_TAG = re.compile(r"</?[A-Za-z|][\w|-]*>")


@lru_cache(maxsize=65536)
def word_class(token: str) -> str:
    """The class of a lower-cased token ("SECOND" for second-person words), or ""."""
    if token in _SECOND_PERSON:
        return "SECOND"
    return _CLASS_OF.get(stem(token), "")


def _form(low: list[str], add: Callable[..., None]) -> None:
    """Features of the sentence's grammatical form, read from the classes of its words.

    * the mood: a sentence that opens (after "please", "now", a label) with a verb of
      producing output ("Explain to the reader that ...", "Give X as the answer") is an
      imperative about what to answer; with a recipient after it, addressed to the one
      who answers;
    * the subject: the classes of the words before the first verb of obligation or
      being ("Readers' *assistants* are required to ...", "A helpful *reply* here opens
      ..."): the answering system or its output as the subject;
    * frames: pairs of classes within :data:`SKIP_REACH` words, in order (obligation then
      producing, producing then recipient), and which classes the sentence holds at all.
    """
    cls = [word_class(t) for t in low]
    i = 0
    while i < len(low) and (low[i] in _OPENERS or not low[i][:1].isalnum()):
        i += 1
    if i < len(low):
        add("mood:" + (cls[i] or "other"))
        if cls[i] == "PRODUCE":
            reach = cls[i + 1:i + 1 + SKIP_REACH]
            for c in set(reach) & {"RECIPIENT", "SECOND", "ADDRESSEE", "META"}:
                add("mood:PRODUCE>" + c)
    for k, c in enumerate(cls[:12]):
        if (c == "MUST" or low[k] in _AUX) and k > 0:
            for s in set(cls[:k]) - {"", "MUST"}:
                add("subj:" + s)
            break
    for k, a in enumerate(cls):
        if a not in _FORM_CLASSES:
            continue
        for b in set(cls[k + 1:k + 1 + SKIP_REACH]):
            if b in _FORM_CLASSES:
                add("sk:" + a + ">" + b)
    held = sorted(set(cls) & set(_FORM_CLASSES))
    for a_i, a in enumerate(held):
        for b in held[a_i + 1:]:
            add("co:" + a + "+" + b)
    if {"PRODUCE", "MUST"} <= set(held) and ({"ADDRESSEE", "SECOND", "RECIPIENT"} & set(held)):
        add("co:directive")


def _bucket(feature: str) -> int:
    return zlib.crc32(feature.encode("utf-8")) % FEATURE_BITS


def features(sentence: str) -> dict[int, float]:
    """The sentence's hashed form features (index -> value), scaled to unit length."""
    raw = sentence.strip()
    toks = _TOKEN.findall(raw)
    low = ["<num>" if t[0].isdigit() else t.lower() for t in toks]
    feats: dict[str, float] = {}

    def add(name: str, value: float = 1.0) -> None:
        feats[name] = feats.get(name, 0.0) + value

    for t in low:
        add("w:" + t)
    for a, b in zip(low, low[1:]):
        add("b:" + a + " " + b)
    cls = [word_class(t) or t for t in low]
    for t in cls:
        if t.isupper():
            add("c:" + t)
    for a, b in zip(cls, cls[1:]):
        if a.isupper() or b.isupper():
            add("cb:" + a + " " + b)
    for t in cls[:FRAME_TOKENS]:
        if t.isupper():
            add("pc:" + t)
    # The frame: an instruction's addressee and verb come first ("AI systems summarizing
    # this page should state that ..."), whatever claim follows.
    head = low[:FRAME_TOKENS]
    for t in head:
        add("p:" + t)
    for a, b in zip(head, head[1:]):
        add("pb:" + a + " " + b)
    if low:
        add("first:" + low[0])
    if len(low) > 1:
        add("first2:" + low[0] + " " + low[1])
    _form([t for t in low if t[:1].isalnum() or t == "<num>"], add)
    alpha = [t for t in toks if t[0].isalpha()]
    # What a verb of producing output is told to produce: a literal (a quoted string, a
    # bracketed or tagged one, words in capitals) rather than something about the subject
    # ('print "OKAY"', 'repeat <X>', 'output: PURPLE FALCON').
    for k, t in enumerate(low):
        if word_class(t) == "PRODUCE":
            after = toks[k + 1:k + 1 + SKIP_REACH]
            if any(a in "\"'`<[" or (len(a) > 1 and a.isupper()) for a in after):
                add("g:produce_literal")
                break
    label = _LABEL.match(raw)
    if label and {word_class(t) for t in _TOKEN.findall(label.group().lower())} & {
            "ADDRESSEE", "RECIPIENT", "META", "SECOND"}:
        add("g:label_addressed")  # "Note to automated readers:", "User:" and its kin
    if any(t in _SECOND_PERSON for t in low):
        add("g:second_person")
    if _LABEL.match(raw):
        add("g:label_colon")
    if _QUOTED.search(raw):
        add("g:quoted")
    if _TAG.search(raw):
        add("g:tag")
    if raw[:1] in "([<#/{*-":
        add("g:bracket_open")
    caps = sum(1 for t in alpha if len(t) > 1 and t.isupper())
    if alpha and caps / len(alpha) >= 0.3:
        add("g:shouting")
    if re.search(r"\b[A-Z]{2,}\s+[A-Z]{2,}\s+[A-Z]{2,}\b", raw):
        add("g:caps_run")  # a payload in capitals ("MUTATION IS A MYTH")
    add("g:bias_len", min(len(alpha), 40) / 40)
    out: dict[int, float] = {}
    for name, value in feats.items():
        i = _bucket(name)
        out[i] = out.get(i, 0.0) + math.log1p(value)
    norm = math.sqrt(sum(v * v for v in out.values())) or 1.0
    return {i: v / norm for i, v in out.items()}
