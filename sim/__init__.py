"""Simulator: physics (pymunk), camera renderer and ground truth for both games."""
