"""The MCP face of one episode: a low-level ``mcp`` server whose calls go to a ``silo.Episode``.

Every ``tools/call`` goes through :meth:`Episode.call_tool` (validation, limits, trace as in
``run``); the result is ``content`` (the output as text) + ``structuredContent`` (the output when
it is a JSON object) + ``isError``. A rejected call is a *result*, never a JSON-RPC error. The
``submit`` tool finishes the episode with its answer; the task's instruction is the server's
``instructions``, the prompt ``task`` and the resource ``silo://task``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol

import mcp_types as types
from anyio.lowlevel import checkpoint
from mcp.server import Server
from mcp.server.context import ServerRequestContext
from mcp.shared.exceptions import MCPError

from .. import Episode, __version__
from .._errors import SiloError
from .._jsonutil import compact_json
from .._result import RunResult
from .._tools import BoundTool, ToolResult, ToolSpec, tool

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
    """A tool's result as MCP sends it: text content, structured content, the error flag."""
    output = result.output
    text = output if isinstance(output, str) else compact_json(output)
    return types.CallToolResult(
        content=[types.TextContent(text=text)],
        structured_content=output if isinstance(output, dict) else None,
        is_error=result.is_error,
    )


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
    """

    ended = True

    def __init__(self, task: str, refusal: ToolResult) -> None:
        self.task = task
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


class EpisodeServer:
    """One episode served over MCP: its tools plus ``submit``, its task as prompt and resource.

    Args:
        episode: the entered episode every call goes to (or an :class:`Ended` one).
        name: the server's name (the environment's).
        reveal: when given, ``submit`` answers ``reveal(result)`` (the grade) instead of
            ``Submitted.``.
        tools: what ``tools/list`` answers (:func:`list_tools_result`); by default built from
            ``episode.tools``. A host serving many episodes of one environment builds it once.

    Attributes:
        server: the ``mcp`` low-level server to run on a transport.
    """

    def __init__(
        self,
        episode: Playable,
        *,
        name: str,
        reveal: Callable[[RunResult], str] | None = None,
        tools: types.ListToolsResult | None = None,
    ) -> None:
        self.episode = episode
        self._reveal = reveal
        if tools is None:
            assert isinstance(episode, Episode), "an Ended episode comes with its tools"
            tools = list_tools_result(episode.tools)
        self._tools = tools
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
            on_read_resource=self._read_resource,
        )
        # The SDK wraps every message in an OpenTelemetry span by default; with no exporter
        # installed that is pure cost, measured at ~40% of the server's CPU per HTTP call.
        self.server.middleware = []

    async def _list_tools(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
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
        prompt = types.Prompt(name=TASK_PROMPT, description="The task to accomplish.")
        return types.ListPromptsResult(prompts=[prompt])

    async def _get_prompt(
        self, ctx: Context, params: types.GetPromptRequestParams
    ) -> types.GetPromptResult:
        if params.name != TASK_PROMPT:
            raise MCPError(
                types.INVALID_PARAMS,
                f'Unknown prompt "{params.name}"; this server has one prompt: "{TASK_PROMPT}".',
            )
        message = types.PromptMessage(
            role="user", content=types.TextContent(text=self.episode.task)
        )
        return types.GetPromptResult(description="The task to accomplish.", messages=[message])

    async def _list_resources(
        self, ctx: Context, params: types.PaginatedRequestParams | None
    ) -> types.ListResourcesResult:
        resource = types.Resource(
            uri=TASK_URI,
            name="task",
            description="The task to accomplish.",
            mime_type="text/plain",
        )
        return types.ListResourcesResult(resources=[resource])

    async def _read_resource(
        self, ctx: Context, params: types.ReadResourceRequestParams
    ) -> types.ReadResourceResult:
        if params.uri != TASK_URI:
            raise MCPError(
                types.INVALID_PARAMS,
                f'Unknown resource "{params.uri}"; this server has one resource: "{TASK_URI}".',
            )
        contents = types.TextResourceContents(
            uri=TASK_URI, mime_type="text/plain", text=self.episode.task
        )
        return types.ReadResourceResult(contents=[contents])
