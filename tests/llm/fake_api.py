"""A loopback HTTP server that speaks enough of the OpenAI chat-completions and
Anthropic messages APIs for the real SDKs to talk to it.

Each test scripts the replies: ``server.script`` is a list of actions consumed
one per completion request (after it is empty, every request gets
``server.default_text``):

- ``("ok", text)`` or ``("ok", text, finish)``: a normal answer;
- ``("status", code, headers[, message])``: an error status with a JSON error body;
- ``("sleep", seconds)``: hold the request that long, then answer normally.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

MODELS = ["fake-model", "claude-fake-1-20250101"]


class FakeAPI:
    def __init__(self) -> None:
        self.script: list[tuple[Any, ...]] = []
        self.default_text = "Hello from the fake model."
        self.requests: list[dict[str, Any]] = []  # {"path", "headers", "body"}
        self.models_status = 200
        self._lock = threading.Lock()
        api = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server API
                api._log(self, None)
                if self.path.rstrip("/").endswith("/models") and api.models_status == 200:
                    data = [
                        {"id": m, "object": "model", "type": "model", "created": 0,
                         "owned_by": "test", "display_name": m,
                         "created_at": "2025-01-01T00:00:00Z"}
                        for m in MODELS
                    ]
                    self._json(200, {"object": "list", "data": data, "has_more": False,
                                     "first_id": MODELS[0], "last_id": MODELS[-1]})
                else:
                    self._json(api.models_status if api.models_status != 200 else 404,
                               {"error": {"type": "not_found_error", "message": "no such route"}})

            def do_POST(self) -> None:  # noqa: N802 - http.server API
                n = int(self.headers.get("content-length") or 0)
                body = json.loads(self.rfile.read(n) or b"{}")
                api._log(self, body)
                action = api._next()
                if action[0] == "sleep":
                    time.sleep(action[1])
                    action = ("ok", api.default_text)
                if action[0] == "status":
                    code, headers = action[1], action[2] if len(action) > 2 else {}
                    message = action[3] if len(action) > 3 else f"fake {code}"
                    kind = "rate_limit_error" if code == 429 else "api_error"
                    self._json(code, {"type": "error", "error": {"type": kind, "message": message}},
                               headers)
                    return
                text = action[1]
                finish = action[2] if len(action) > 2 else None
                if self.path.endswith("/chat/completions"):
                    self._json(200, api._openai(body, text, finish or "stop"))
                elif self.path.endswith("/messages"):
                    self._json(200, api._anthropic(body, text, finish or "end_turn"))
                else:
                    self._json(404, {"error": {"message": "no such route"}})

            def _json(self, code: int, obj: Any, headers: dict[str, str] | None = None) -> None:
                blob = json.dumps(obj).encode()
                try:
                    self.send_response(code)
                    self.send_header("content-type", "application/json")
                    self.send_header("content-length", str(len(blob)))
                    for k, v in (headers or {}).items():
                        self.send_header(k, v)
                    self.end_headers()
                    self.wfile.write(blob)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (timeout test)

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.port = self.httpd.server_address[1]
        self.thread = threading.Thread(
            target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )

    # -- helpers -----------------------------------------------------------
    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def _log(self, handler: BaseHTTPRequestHandler, body: Any) -> None:
        with self._lock:
            self.requests.append(
                {"path": handler.path, "headers": {k.lower(): v for k, v in handler.headers.items()}, "body": body}
            )

    def _next(self) -> tuple[Any, ...]:
        with self._lock:
            return self.script.pop(0) if self.script else ("ok", self.default_text)

    def completion_requests(self) -> list[dict[str, Any]]:
        return [r for r in self.requests if r["body"] is not None]

    @staticmethod
    def _tokens(body: dict[str, Any]) -> int:
        msgs = body.get("messages", [])
        chars = sum(len(m.get("content", "")) for m in msgs if isinstance(m.get("content"), str))
        return 10 + chars // 4 + len(body.get("system", "") or "") // 4

    def _openai(self, body: dict[str, Any], text: str, finish: str) -> dict[str, Any]:
        tin, tout = self._tokens(body), 1 + len(text) // 4
        return {
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0,
            "model": body.get("model", "?") + "-served",
            "choices": [{"index": 0, "finish_reason": finish,
                         "message": {"role": "assistant", "content": text}}],
            "usage": {"prompt_tokens": tin, "completion_tokens": tout, "total_tokens": tin + tout},
        }

    def _anthropic(self, body: dict[str, Any], text: str, finish: str) -> dict[str, Any]:
        tin, tout = self._tokens(body), 1 + len(text) // 4
        return {
            "id": "msg_1", "type": "message", "role": "assistant",
            "model": body.get("model", "?"),
            "content": [{"type": "text", "text": text}],
            "stop_reason": finish, "stop_sequence": None,
            "usage": {"input_tokens": tin, "output_tokens": tout},
        }

    def __enter__(self) -> "FakeAPI":
        self.thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
