"""The application layer: command line, live loop, replay, overlay server."""
