"""Where verdicts go: the per-DAG results stream, its subscribers, and the cost ledger."""
