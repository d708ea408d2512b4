"""``silo_async.world.tools``: tools built one way, and the ready-made ones every world lists.

* **declaring**: :func:`define_tool` (a tool whose input is an :class:`~silo_async.world.Input`
  class or schema properties);
* **writes**: :class:`Actor` (the ``actorId`` every write takes, resolved before anything else)
  builds write tools with :meth:`Actor.write_tool`; a :class:`Target` names the record a tool
  acts on (looked up, then guarded); the body gets a :class:`Write` that tracks field changes
  and audits them under the tool's name;
* **lists**: :class:`Collection` (``list_<x>``, ``search_<x>``, ``get_<x>`` named by one
  convention), the factories :func:`list_tool`, :func:`search_tool`, :func:`get_tool`, and
  :func:`paginate` (``{total, count, offset, results}``, the view applied to the page only),
  :func:`matches_text`, :func:`sorted_by_id`, with the types :data:`View` and :data:`Where`;
* **ready-made**: :data:`get_current_time` and :data:`advance_clock` (the simulated clock),
  :data:`list_audit_entries` (oldest first) and :data:`get_audit_entry` (the audit log).
"""

from __future__ import annotations

from ._audit import get_audit_entry as get_audit_entry
from ._audit import list_audit_entries as list_audit_entries
from ._clock import advance_clock as advance_clock
from ._clock import get_current_time as get_current_time
from ._collection import Collection as Collection
from ._define import define_tool as define_tool
from ._lists import View as View
from ._lists import Where as Where
from ._lists import get_tool as get_tool
from ._lists import list_tool as list_tool
from ._lists import matches_text as matches_text
from ._lists import paginate as paginate
from ._lists import search_tool as search_tool
from ._lists import sorted_by_id as sorted_by_id
from ._writes import Actor as Actor
from ._writes import Target as Target
from ._writes import Write as Write

__all__ = [
    "Actor",
    "Collection",
    "Target",
    "View",
    "Where",
    "Write",
    "advance_clock",
    "define_tool",
    "get_audit_entry",
    "get_current_time",
    "get_tool",
    "list_audit_entries",
    "list_tool",
    "matches_text",
    "paginate",
    "search_tool",
    "sorted_by_id",
]
