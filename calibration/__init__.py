"""Camera calibration, table profiles and the only place pixels become millimetres."""
from .profile import Profile, ProfileError, default_profile, list_profiles, load_profile

__all__ = ["Profile", "ProfileError", "default_profile", "list_profiles", "load_profile"]
