"""Running the tests as a core-only install would, inside a full one (see ``run.py``)."""
