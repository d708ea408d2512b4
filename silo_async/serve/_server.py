"""The MCP face of one episode: a low-level ``mcp`` server whose calls go to a ``silo.Episode``.

Every ``tools/call`` goes through :meth:`Episode.call_tool` (validation, limits, trace as in
``run``); the result is ``content`` (the output as text) + ``structuredContent`` (the output when
it is a JSON object) + ``isError``. A rejected call is a *result*, never a JSON-RPC error. The
``submit`` tool finishes the episode with its answer; the task's instruction is the server's
``instructions``, the prompt ``task`` and the resource ``silo://task`` (and no resource
templates: ``resources/templates/list`` answers an empty list).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import mcp_types as types
from anyio.lowlevel import checkpoint
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from .._errors import SiloError
from .._jsonutil import compact_json
from .._result import RunResult
from .._tools import BoundTool, ToolResult, ToolSpec, tool
from .._version import __version__

__all__ = [
    "SUBMIT",
    "TASK_URI",
    "Ended",
    "EpisodeServer",
    "Playable",
    "call_result",
    "check_reserved",
    "list_tools_result",
]

#: The tool every served episode adds to the environment's tools.
SUBMIT = "submit"
#: The resource holding the task's instruction.
TASK_URI = "silo://task"
#: The prompt holding the task's instruction.
TASK_PROMPT = "task"

_SUBMIT_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "answer": {"type": "string", "description": "Your final answer to the task."},
    },
    "required": ["answer"],
    "additionalProperties": False,
}


@tool(
    name=SUBMIT,
    description=(
        "Submit your final answer and end the episode. Call it once, when the task is done: "
        "every call after it is refused."
    ),
    input_schema=_SUBMIT_SCHEMA,
)
def _submit(state: Any, input: dict[str, Any]) -> Any:
    return input["answer"]


# Bound to no world: it only validates the arguments with the same messages as a real tool.
_SUBMIT_CHECK = BoundTool(_submit, None)

#: What a handler gets: the SDK's per-request context (no lifespan state is used).
Context = ServerRequestContext[Any, Any]


def check_reserved(tool_names: Iterable[str], environment: str) -> None:
    """Refuse an environment that already has a tool named ``submit``.

    Raises:
        SiloError: ``tool_name_reserved``.
    """
    if SUBMIT in tool_names:
        raise SiloError(
            "tool_name_reserved",
            f'Environment "{environment}" has a tool named "{SUBMIT}", a name silo-async serve '
            f'reserves for the tool that ends an episode. Rename the tool (e.g. "{SUBMIT}_form") '
            "in the environment's tools registry.",
            {"environment": environment, "tool": SUBMIT},
        )


def call_result(result: ToolResult) -> types.CallToolResult:
    r"""A tool's result as MCP sends it: text content, structured content, the error flag.

    A lone surrogate (which UTF-8, and so the wire, cannot carry) is sent as its ``\uXXXX``
    escape, as the artifacts write it: inside the JSON text that is the same character.
    """
    output = result.output
    text = output if isinstance(output, str) else compact_json(output)
    structured = output if isinstance(output, dict) else None
    if not text.isascii():
        try:
            text.encode()
        except UnicodeEncodeError:  # rare: escape every string, then the text
            text, structured = escaped(text), escaped(structured)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=structured,
        is_error=result.is_error,
    )


def escaped(value: Any) -> Any:
    r"""``value`` with every lone surrogate in its strings (and keys) as a ``\uXXXX`` escape."""
    if isinstance(value, str):
        return value.encode("utf-8", "backslashreplace").decode()
    if isinstance(value, dict):
        return {escaped(k): escaped(v) for k, v in value.items()}
    if isinstance(value, list):
        return [escaped(v) for v in value]
    return value


def list_tools_result(specs: Sequence[ToolSpec]) -> types.ListToolsResult:
    """What ``tools/list`` answers for these tools: them, then ``submit``."""
    return types.ListToolsResult(
        tools=[
            types.Tool(name=s.name, description=s.description, input_schema=s.input_schema)
            for s in [*specs, _submit.spec]
        ]
    )


class Playable(Protocol):
    """What :class:`EpisodeServer` serves: a :class:`silo.Episode`, or :class:`Ended`."""

    @property
    def task(self) -> str:
        """The task's instruction."""

    @property
    def tools(self) -> list[ToolSpec]:
        """The tools (known once the episode has started)."""

    @property
    def ended(self) -> bool:
        """True from the moment the episode ends."""

    async def call_tool(self, name: str, input: dict[str, Any] | None = None) -> ToolResult:
        """A tool call, as :meth:`silo.Episode.call_tool`."""

    async def finish(self, answer: Any = None) -> RunResult:
        """End the episode, as :meth:`silo.Episode.finish`."""


class Ended:
    """An episode that has ended and was let go: every call answers its ``refusal``.

    Args:
        task: the task's instruction.
        refusal: what the episode answered calls after its end (``invalid_state``).
        tools: the episode's tools.
    """

    ended = True

    def __init__(self, task: str, refusal: ToolResult, tools: list[ToolSpec]) -> None:
        self.task = task
        self.tools = tools
        self._refusal = refusal

    async def call_tool(self, name: str, input: dict[str, Any] | None = None) -> ToolResult:
        """The refusal (a checkpoint, as every call)."""
        await checkpoint()
        return self._refusal

    async def finish(self, answer: Any = None) -> RunResult:
        """Never called: a finished episode's ``submit`` is refused before it finishes."""
        raise RuntimeError("This episode has ended; its result is in its run directory.")


def _no_header_schema(name: str) -> None:
    return None


def _text_result(text: str) -> types.CallToolResult:
    return types.CallToolResult(content=[types.TextContent(text=text)])


#: What the task prompt and the task resource say they are.
_ABOUT_TASK = "The task to accomplish."


def _only(kind: str, asked: str, known: str) -> None:
    """Refuse a prompt or resource other than the one a server has (the client's mistake).

    An unknown resource's error names it in ``data.uri``, as the specification asks.
    """
    if asked != known:
        message = f'Unknown {kind} "{asked}"; this server has one {kind}: "{known}".'
        data = {"uri": asked} if kind == "resource" else None
        raise MCPError(types.INVALID_PARAMS, message, data)


class EpisodeServer:
    """One episode served over MCP: its tools plus ``submit``, its task as prompt and resource.

    Args:
        episode: the entered episode every call goes to (or an :class:`Ended` one).
        name: the server's name (the environment's).
        reveal: when given, ``submit`` answers ``reveal(result)`` (the grade) instead of
            ``Submitted.``.
        tools_for: builds what ``tools/list`` answers from ``episode.tools``, on the first
            ``tools/list`` (:func:`list_tools_result`). A host serving many episodes of one
            environment passes one that builds it once for all of them.

    Attributes:
        server: the ``mcp`` low-level server to run on a transport.
    """

    def __init__(
        self,
        episode: Playable,
        *,
        name: str,
        reveal: Callable[[RunResult], str] | None = None,
        tools_for: Callable[[Sequence[ToolSpec]], types.ListToolsResult] = list_tools_result,
    ) -> None:
        self.episode = episode
        self._reveal = reveal
        self._tools_for = tools_for
        self._tools: types.ListToolsResult | None = None
        self.server: Server[Any] = Server(
            name,
            version=__version__,
            instructions=episode.task,
            # Nothing to check against Mcp-Param-* headers: no silo schema declares x-mcp-header.
            # Without this the HTTP transport walks the tool's schema on every call.
            get_tool_input_schema=_no_header_schema,
            on_list_tools=self._list_tools,
            on_call_tool=self._call_tool,
            on_list_prompts=self._list_prompts,
            on_get_prompt=self._get_prompt,
            on_list_resources=self._list_resources,
            on_list_resource_templates=self._list_resource_templates,
            on_read_resource=self._read_resource,
        )
        # The SDK wraps every message in an OpenTelemetry span by default; with no exporter
        # installed that is pure cost, measured at ~40% of the server's CPU per HTTP call.
        self.server.middleware = []

    async def _list_tools(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        if self._tools is None:
            self._tools = self._tools_for(self.episode.tools)
        return self._tools

    async def _call_tool(
        self, ctx: Context, params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        if params.name == SUBMIT:
            return await self._submit(params.arguments)
        return call_result(await self.episode.call_tool(params.name, params.arguments))

    async def _submit(self, arguments: dict[str, Any] | None) -> types.CallToolResult:
        episode = self.episode
        # finish() marks the episode ended before it first awaits, so a second submit racing
        # the first one's grading is refused here too.
        if episode.ended:
            # Refused by the episode itself, with its own message ("The episode has ended").
            return call_result(await episode.call_tool(SUBMIT, arguments))
        checked, _ = _SUBMIT_CHECK.invoke_sync(arguments)
        if checked.is_error:
            return call_result(checked)
        result = await episode.finish(checked.output)
        return _text_result(self._reveal(result) if self._reveal else "Submitted.")

    async def _list_prompts(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListPromptsResult:
        prompt = types.Prompt(name=TASK_PROMPT, description=_ABOUT_TASK)
        return types.ListPromptsResult(prompts=[prompt])

    async def _get_prompt(
        self, ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        _only("prompt", params.name, TASK_PROMPT)
        message = types.PromptMessage(
            role="user", content=types.TextContent(text=self.episode.task)
        )
        return types.GetPromptResult(description=_ABOUT_TASK, messages=[message])

    async def _list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resource = types.Resource(
            uri=TASK_URI,
            name="task",
            description=_ABOUT_TASK,
            mime_type="text/plain",
        )
        return types.ListResourcesResult(resources=[resource])

    async def _list_resource_templates(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourceTemplatesResult:
        # None: a client that sees the resources capability may still ask.
        return types.ListResourceTemplatesResult(resource_templates=[])

    async def _read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        _only("resource", params.uri, TASK_URI)
        contents = types.TextResourceContents(
            uri=TASK_URI, mime_type="text/plain", text=self.episode.task
        )
        return types.ReadResourceResult(contents=[contents])
