"""The command lines of harness's commands that sit beside a library module of the same name, one module each
(``sparkdl ingest`` is :mod:`harness.cli.ingest`, its library :mod:`harness.ingest`).

Each module holds the command's parser, its ``main(argv) -> int`` and what it prints; the library module imports no
argparse. ``sparkdl submit`` (:mod:`harness.submit`) and ``sparkdl mlflow`` (:mod:`harness.mlflow`) are command
modules already: their libraries are :mod:`harness.campaign` and :mod:`harness.mlflow_export`.
"""
