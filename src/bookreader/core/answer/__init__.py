"""Answering a question as a pipeline of typed stages (see :mod:`.pipeline`).

Layers, each importing only those below it (an import-linter contract keeps the order):
``answerer`` > ``pipeline`` > ``generate`` | ``choose`` | ``check`` > ``fallbacks`` |
``context`` | ``cite`` > ``render`` > ``draft`` > ``modes`` > ``run``.
"""
