"""The Wall: substance, internal consistency and grounding, decided by deterministic checks."""
