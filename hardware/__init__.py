"""Frame sources: Raspberry Pi camera, USB webcam, video files, streams."""
