"""The network lane: cited URLs fetched safely and politely, answers handed to the engine.

Adapters, like the judges: the engine (``workers.evaluate.references``) says what to look
up and reads the answers as data; this package does the looking.
"""
