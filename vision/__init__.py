"""Detection, tracking and event extraction: frames in, shot records out."""
