"""windags-evaluator: the review fleet. Import subpackages directly; this one stays empty."""
