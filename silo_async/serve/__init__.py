"""``silo-async serve``: episodes played by any MCP client, over stdio or streamable HTTP.

Needs the ``mcp`` extra (``pip install 'silo_async[mcp]'``); ``import silo_async`` never imports
this package, so the core runs without it.
"""

from __future__ import annotations

from ._http import serve_http as serve_http
from ._server import SUBMIT as SUBMIT
from ._server import TASK_URI as TASK_URI
from ._server import EpisodeServer as EpisodeServer
from ._server import call_result as call_result
from ._server import check_reserved as check_reserved
from ._stdio import serve_stdio as serve_stdio

__all__ = [
    "SUBMIT",
    "TASK_URI",
    "EpisodeServer",
    "call_result",
    "check_reserved",
    "serve_http",
    "serve_stdio",
]
