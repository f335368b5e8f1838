"""What every stage of the pipeline shares: the base error and the command-line shape.

``sparkdl.errors.ToolError`` is the one base class of every error the tool raises on its own
account (each package's base error derives from it and carries an exit code);
``sparkdl.cli.run_cli`` runs every ``python -m ...`` entry point the same way.
"""
