"""optimize: searches that run real jobs through the harness (learning rate, batch size, epochs)."""
