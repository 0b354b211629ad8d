"""Tools for people at a terminal: the ``windags-eval`` CLI, the demo, a local fleet."""
