"""Runs already on disk: finding and loading them (``_runs``) and replaying one (``_replay``).

The run-directory format itself belongs to :mod:`silo_async.runs`; this is what ``runs list``,
``runs show``, ``replay`` and export read through it.
"""
