"""Frame sources: Raspberry Pi camera, USB webcam, video files, image folders, streams.

Every source gives immutable :class:`Frame` values with an index and a timestamp; lost frames
become :class:`FrameGap` events. Vendor libraries (picamera2) are imported only when used.
"""
from .frame import Frame, FrameGap, GapDetector, SourceError, SourceLost, TruncatedVideo
from .reconnect import ReconnectingSource
from .source import FrameSource, ImageFolderSource, VideoFileSource
from .spec import SOURCE_HELP, open_source

__all__ = ["Frame", "FrameGap", "GapDetector", "SourceError", "SourceLost", "TruncatedVideo", "FrameSource",
           "ImageFolderSource", "VideoFileSource", "ReconnectingSource", "open_source", "SOURCE_HELP"]
