"""Code wherever an output puts it: fenced blocks and whole outputs read by their language's parser.

Parsers come from the standard library (``ast``, ``json``, ``tomllib``, expat), from
packages the engine already uses (sqlglot) and from PyYAML and tree-sitter's grammar
wheels, each loaded once per process, the first time an output needs it.
"""
