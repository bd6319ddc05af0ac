"""``bookreader serve`` and ``bookreader keys``: the class server and its API keys."""

from __future__ import annotations

import argparse
import logging
import os
import sys
from datetime import datetime, timezone

from bookreader.errors import BookReaderError, InvalidInput

log = logging.getLogger(__name__)

#: The audit database from the environment (a container keeps its password out of argv).
AUDIT_URL_ENV = "BOOKREADER_AUDIT_URL"


def cmd_serve(args: argparse.Namespace) -> int:
    from bookreader.cli import load_settings

    try:
        import uvicorn

        from bookreader.server import ServeConfig, create_app
    except ImportError as exc:
        raise BookReaderError(
            f"The server needs FastAPI and uvicorn ({exc.name} is missing). Install them "
            "with `pip install fastapi uvicorn`."
        ) from exc
    from bookreader.server.limits import parse_rate

    from bookreader.server import connections

    settings = with_store(load_settings(args), args.store)
    if args.audit_url:
        settings = settings.updated(audit_url=args.audit_url.strip())
    parse_rate(args.rate_limit)  # a bad value fails before anything starts
    parse_rate(args.auth_failure_limit)
    if args.workers is not None and args.workers < 1:
        raise InvalidInput("--workers must be at least 1.")
    for name in ("max_connections", "max_connections_per_ip"):
        value = getattr(args, name)
        if value is not None and value < 1:
            raise InvalidInput(f"--{name.replace('_', '-')} must be at least 1.")
    if not (args.header_timeout > 0 and args.body_timeout > 0):
        raise InvalidInput("--header-timeout and --body-timeout must be more than 0 seconds.")
    open_files = connections.raise_open_files_limit()
    config = ServeConfig(
        host=args.host, port=args.port, backend=args.backend, books=book_refs(args.book),
        rate_limit=args.rate_limit, workers=args.workers, max_queue=args.max_queue,
        timeout_s=args.timeout, queue_wait_s=args.queue_wait,
        cors_origins=tuple(o.strip() for o in (args.cors_origin or ()) if o.strip()),
        rate_limit_store=args.rate_limit_store, auth_failure_limit=args.auth_failure_limit,
        header_timeout_s=args.header_timeout, body_timeout_s=args.body_timeout,
        max_connections=connections.connection_budget(open_files, args.max_connections),
        max_connections_per_ip=args.max_connections_per_ip,
    )
    guard = connections.ConnectionGuard(
        max_connections=config.max_connections or connections.MAX_CONNECTIONS,
        max_per_ip=config.max_connections_per_ip, header_timeout_s=config.header_timeout_s)
    log.info("Connections: at most %d (%d per address), request head within %g s, open "
             "files %d", guard.max_connections, guard.max_per_ip, guard.header_timeout_s,
             open_files)
    remote_model_notice(settings, args.backend)
    app = create_app(settings, config)
    state = app.state.bookreader
    if state.keys.count() == 0:
        sys.stderr.write(
            "bookreader: no API keys yet, so every request except /health will be refused. "
            "Make one with `bookreader keys add NAME`.\n"
        )
    if args.host not in ("127.0.0.1", "localhost", "::1"):
        sys.stderr.write(f"bookreader: listening on {args.host}: other machines can reach "
                         "this server. Put it behind HTTPS before students use it.\n")
    sys.stderr.write(f"BookReader serving on http://{args.host}:{args.port} "
                     f"(demo: http://{args.host}:{args.port}/demo, API: /docs)\n")
    sys.stderr.flush()
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning",
                timeout_graceful_shutdown=5, http=connections.protocol_class(guard),
                timeout_keep_alive=5)
    return 0


def with_store(settings, store: str | None):
    """The settings with ``--store qdrant:URL`` applied (None: unchanged).

    Raises:
        InvalidInput: not ``qdrant:http(s)://HOST[:PORT]``.
    """
    if not store:
        return settings
    raw = store.strip()
    url = raw[7:].strip() if raw.lower().startswith("qdrant:") else ""
    if not url.lower().startswith(("http://", "https://")):
        raise InvalidInput(f"--store {raw}: give a Qdrant server as qdrant:http://HOST:6333.")
    return settings.updated(store_backend="server", qdrant_url=url)


def book_refs(books: list[str] | None) -> tuple[str, ...]:
    """``--book`` values with each folder replaced by the PDFs in it, sorted by name (an
    empty folder adds none: with no books at all the server serves its defaults)."""
    from pathlib import Path

    out: list[str] = []
    for ref in books or ():
        folder = Path(ref).expanduser()
        if not folder.is_dir():
            out.append(ref)
            continue
        pdfs = sorted(p for p in folder.iterdir() if p.suffix.lower() == ".pdf" and p.is_file())
        if not pdfs:
            sys.stderr.write(f"bookreader: --book {ref}: no PDF files in that folder yet.\n")
        out.extend(str(p) for p in pdfs)
    return tuple(out)


def remote_model_notice(settings, backend: str | None) -> None:
    """Say on stderr, once per host, that passages go to a model server elsewhere."""
    from bookreader.core.llm.registry import openai_url, resolve_name
    from bookreader.core.llm.specs import is_openai_name

    name = resolve_name(backend, settings)
    if not is_openai_name(name):
        return
    from bookreader.core.llm.openai_servers import notice_once

    note = notice_once(openai_url(name, settings), settings.data_dir)
    if note:
        sys.stderr.write(f"bookreader: {note}\n")


def cmd_keys(args: argparse.Namespace) -> int:
    from bookreader.cli import load_settings
    from bookreader.server.keys import KeyStore

    store = KeyStore(load_settings(args).data_dir)
    if args.keys_command == "add":
        token = store.add(args.name)
        sys.stderr.write(f"Key '{args.name}' added. Its token is shown only now; give it to "
                         "the client and keep it secret:\n")
        sys.stdout.write(token + "\n")
    elif args.keys_command == "revoke":
        store.revoke(args.name)
        print(f"Key '{args.name}' revoked. Requests with it are refused from now on.")
    else:
        keys = store.list()
        if not keys:
            print("No API keys. Add one with `bookreader keys add NAME`.")
        for k in keys:
            when = (datetime.fromtimestamp(k["created"], timezone.utc).strftime("%Y-%m-%d %H:%M")
                    if k["created"] else "")
            print(f"{k['name']:<24} {k['source']:<20} {when}")
    return 0


def register(sub) -> None:
    p = sub.add_parser("serve", help="answer questions over HTTP (a web textbook, a class)")
    p.add_argument("--host", default="127.0.0.1",
                   help="address to listen on (default 127.0.0.1: this machine only)")
    p.add_argument("--port", type=int, default=8765, help="port (default 8765)")
    p.add_argument("--backend", help="bundled, extractive, claude, openai:URL (a model "
                   "server) or gguf:PATH (default: the settings' llm_backend)")
    p.add_argument("--model", help="with --backend openai:URL, the model id on that server")
    p.add_argument("--store", metavar="qdrant:URL",
                   help="keep the books' vectors in a Qdrant server (qdrant:http://HOST:6333) "
                   "instead of this machine's data folder (default: the settings' store)")
    p.add_argument("--audit-url", metavar="URL", default=os.environ.get(AUDIT_URL_ENV) or None,
                   help="the audit database, e.g. postgresql+psycopg://user@host/db, shared by "
                   f"every server process (default: ${AUDIT_URL_ENV}, else the settings')")
    p.add_argument("--book", action="append", metavar="BOOK",
                   help="a book to serve: id, id prefix, PDF or a folder of PDFs (indexed at "
                   "startup); repeat for several (default: every ready book, else the "
                   "sample book)")
    p.add_argument("--rate-limit", default="100/minute",
                   help="requests per key, COUNT/UNIT (default 100/minute)")
    p.add_argument("--rate-limit-store", choices=("auto", "memory", "shared"), default="auto",
                   help="where the per-key counts live: this process's memory, or a table in "
                   "the audit database shared by every server process writing it, kept over "
                   "a restart (default auto: shared when settings.json names an audit_url). "
                   "A server counting in memory must be alone on its data folder")
    p.add_argument("--auth-failure-limit", default="20/minute", metavar="COUNT/UNIT",
                   help="requests with an invalid API key per client address; over it the "
                   "address gets 429 for a while (default 20/minute)")
    p.add_argument("--header-timeout", type=float, default=10.0, metavar="S",
                   help="a connection must send its request headers within S seconds "
                   "(default 10)")
    p.add_argument("--body-timeout", type=float, default=30.0, metavar="S",
                   help="a request body must arrive within S seconds (default 30)")
    p.add_argument("--max-connections", type=int, metavar="N",
                   help="connections held at once (default 4096, fewer when the open-file "
                   "limit is lower); over it, idle connections are closed first")
    p.add_argument("--max-connections-per-ip", type=int, default=128, metavar="N",
                   help="connections held at once per client address (default 128)")
    p.add_argument("--workers", type=int,
                   help="questions answered at once (default 1 for a local model, 4 for "
                   "claude/extractive)")
    p.add_argument("--max-queue", type=int, help="questions that may wait (default 16 per worker for "
                   "claude/extractive, 4 for a local model)")
    p.add_argument("--timeout", type=float, metavar="S",
                   help="budget of one answer in seconds; over it, 504 (default: the "
                   "backend's generation budget + the retrieval budget)")
    p.add_argument("--queue-wait", type=float, metavar="S",
                   help="longest wait for a worker; over it, 503 (default: --timeout)")
    p.add_argument("--cors-origin", action="append", metavar="URL",
                   help="a web page origin allowed to call the server (off by default)")
    p.set_defaults(func=cmd_serve)

    p = sub.add_parser("keys", help="API keys of `bookreader serve`: add, list, revoke")
    ks = p.add_subparsers(dest="keys_command", metavar="ACTION", required=True)
    a = ks.add_parser("add", help="make a key and print its token once")
    a.add_argument("name", help="the key's name (the client id in the audit log)")
    ks.add_parser("list", help="list the keys (names only)")
    r = ks.add_parser("revoke", help="delete a key")
    r.add_argument("name")
    p.set_defaults(func=cmd_keys)
