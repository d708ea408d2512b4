"""``silo_async.users``: who a conversational task's agent talks to (docs/users.md).

* :class:`~silo_async.User` — the protocol: ``async def reply(self, turn) -> UserReply``;
* :class:`~silo_async.ScriptedUser` — plays the task's ``script`` (the default ``user=``);
* :func:`model_user` — a model plays the user, on the model agents' adapters
  (``--user-model PROVIDER/MODEL``).

Pass ``user=`` (a function of the task returning a fresh user) to ``run``, ``run_many``,
``evaluate`` or ``episode``.
"""

from __future__ import annotations

from .._user import ScriptedUser as ScriptedUser
from .._user import User as User
from .._user import UserFactory as UserFactory
from .._user import UserReply as UserReply
from .._user import UserTurn as UserTurn
from ._model import END_MARK as END_MARK
from ._model import ModelUser as ModelUser
from ._model import model_user as model_user

__all__ = [
    "END_MARK",
    "ModelUser",
    "ScriptedUser",
    "User",
    "UserFactory",
    "UserReply",
    "UserTurn",
    "model_user",
]
