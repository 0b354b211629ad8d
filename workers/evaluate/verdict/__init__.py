"""The last step: confidence, iteration, convergence, the human gate and the decision."""
