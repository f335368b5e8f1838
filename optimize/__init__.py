"""optimize: searches that run real jobs through the harness (learning rate, batch size, epochs).

``lr`` (Marinos 2021's learning-rate heuristic and a bracketing + Brent search), ``batch`` (Courier's batch size
under a latency SLO, Albo Martínez 2021), ``epochs`` (max epochs under a time budget, Schouten and Mukherjee), ``concurrent`` (njobs
copies of a job at once), ``session`` / ``objective`` (single resumable jobs through :class:`harness.campaign.Campaign`),
``pareto`` (the front of a campaign's ok runs and its hypervolume), ``search`` (a multi-objective Optuna search
on real jobs with per-epoch pruning). Each command's parser and ``main`` are in ``cli`` (``cli/pareto.py`` is
``sparkdl pareto``'s), ``sparkdl search``'s in ``search/__main__.py``.
"""
