"""models: cost, ANOVA, queueing and performance-prediction models over a results table."""
