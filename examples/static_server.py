"""The static file server of the example pages (``web/serve.py``, ``webgpu/serve.py``): the page's own folder,
and one more folder (the compiled model or kernels) mounted under a URL prefix, on the loopback interface."""

from __future__ import annotations

import http.server
from functools import partial
from pathlib import Path

TYPES = {
    ".html": "text/html",
    ".mjs": "text/javascript",
    ".js": "text/javascript",
    ".wasm": "application/wasm",
    ".json": "application/json",
    ".ts": "text/plain",
    ".wgsl": "text/plain",
    ".png": "image/png",
    ".spv": "application/octet-stream",
}


class PageHandler(http.server.SimpleHTTPRequestHandler):
    """Static files from ``page``; ``/<mount>/<name>`` from ``mounted`` (no subdirectories, no '..')."""

    def __init__(self, *args, page: Path, mount: str, mounted: Path, **kwargs) -> None:  # noqa: ANN002, ANN003
        self.prefix, self.mounted = f"/{mount}/", mounted
        super().__init__(*args, directory=str(page), **kwargs)

    def translate_path(self, path: str) -> str:
        clean = path.split("?", 1)[0].split("#", 1)[0]
        if clean.startswith(self.prefix):
            return str(self.mounted / Path(clean[len(self.prefix) :]).name)
        return super().translate_path(path)

    def guess_type(self, path: str) -> str:
        return TYPES.get(Path(path).suffix, super().guess_type(path))

    def end_headers(self) -> None:
        self.send_header("Cache-Control", "no-store")
        super().end_headers()

    def log_message(self, format: str, *args: object) -> None:  # noqa: A002
        pass


def serve(host: str, port: int, page: Path, mount: str, mounted: Path) -> None:
    """Serve until Ctrl-C, printing the URL (port 0: any free port)."""
    handler = partial(PageHandler, page=page, mount=mount, mounted=mounted)
    server = http.server.ThreadingHTTPServer((host, port), handler)
    host, port = server.server_address[:2]
    print(f"serving http://{host}:{port}/ (Ctrl-C stops)", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
