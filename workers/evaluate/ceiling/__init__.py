"""The Ceiling (Stage 2): a model judge scores what the deterministic layers cannot."""
