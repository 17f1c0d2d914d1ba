"""Training the learned detector: simulator datasets (``data``) and the ultralytics run and export (``train``).

It lives on the judge side because it needs the simulator, the calibration profiles and the shipped model
files (``models``), none of which the vision layer may import."""
