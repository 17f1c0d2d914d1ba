"""Camera calibration, table profiles and the only place pixels become millimetres."""
from .errors import CalibrationError, EquipmentError
from .profile import Profile, ProfileError, default_profile, list_profiles, load_profile, profile_for

__all__ = ["CalibrationError", "EquipmentError", "Profile", "ProfileError", "default_profile", "list_profiles", "profile_for",
           "load_profile"]
