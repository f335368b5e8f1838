"""models: ANOVA, power and sample size, response surfaces, desirability, queueing and performance prediction
over a results table (the cost of a run is :mod:`sparkdl.cost`)."""
