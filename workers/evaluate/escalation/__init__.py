"""The router's decision: P(fail) from the evidence, against what Stage 2 costs."""
