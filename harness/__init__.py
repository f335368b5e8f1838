"""harness: experimental designs and the campaign runner (`python -m harness.submit`)."""
