"""Finding the Novuss bat before its colour is known: by its size, where it must be put down.

The bat is no part of the opening layout (a hand puts it down in the striker's zone before each stroke), and
a table's bat may be of any colour, so its colour is not taken from the profile: until it has been seen,
a disc of the bat's size lying sharp in a striking zone is the bat, whatever its colour, and its colour is
measured once it has lain there still with no hand over it (:class:`vision.put_down.PutDown`; the cue aiming
at its edge covers none of its top).

The size tells a bat from a pawn: a pawn fitted with the bat's radius finds its outline about the radius
difference (2 mm) inside it, the bat fitted with a pawn's that much outside (``RimFit.bias_mm``), so half
the difference separates them; blur widens an outline, which is why only a sharp fit counts. A real bat's
edge is rounded or chamfered and can look as small as a pawn: a disc whose colour no pawn class claims,
lying where the layout has no pawn, is taken down to a pawn's size (shape and place first, colour to tell
it from the pawns).
"""
from __future__ import annotations

from .put_down import PutDown

__all__ = ["BatSearch"]


class BatSearch(PutDown):
    """``could_be(fit)`` on a fit with a pawn's radius; ``is_bat(fit)`` on the fit again with the bat's;
    ``seen(centre_mm, colour, frame)`` for an unknown-coloured bat found; ``settled(dets, frame)``: the
    colour to learn once it lies still (or None)."""

    def __init__(self, spec, surface, rest_mm: float = 1.0, still_frames: int = 2):
        super().__init__(rest_mm, still_frames)
        self.active = spec.striker is not None
        if not self.active:
            return
        self.surface = surface  # where the bat must start: each player's striking zone (``Surface.zones``)
        self.r_bat, self.r_pawn = surface.radius(spec.striker), surface.radius(spec.piece_kind)
        self.half_step_mm = 0.5 * (self.r_bat - self.r_pawn)

    def in_zone(self, centre_mm) -> bool:
        """In a striking zone, and wholly on the playing surface (a disc over the cushion is in a hand)."""
        return self.surface.in_zone(centre_mm, self.r_bat)

    def could_be(self, fit, max_rms_mm: float, strange: bool = False) -> bool:
        """A sharp outline larger than a pawn's, in a striking zone (fitted with a pawn's radius); or, for a
        ``strange`` disc (a colour no pawn class claims, where no pawn of the layout lies), one at least a
        pawn's size: a bat's rounded or chamfered edge can look a millimetre or two smaller than it is."""
        big = self._clear(fit) and (fit.bias_mm > self.half_step_mm or strange and fit.bias_mm > -self.half_step_mm)
        return (self.active and big and fit.rays >= 0.7
                and fit.rms_mm <= 0.5 * max_rms_mm and self.in_zone(fit.centre_mm))

    def is_bat(self, fit, max_rms_mm: float, strange: bool = False) -> bool:
        """The outline is the bat's size (fitted with the bat's radius; a ``strange`` disc as in
        ``could_be``: down to a pawn's), sharp, in a striking zone. Up to three half-steps wider: blur, noise and
        a codec widen an outline (#16, the harsher simulator's *everything*: the bat at rest fitted 1.2-1.9 mm
        wide on all but one frame, was never taken, and the stroke was refused)."""
        low = -3 * self.half_step_mm if strange else -self.half_step_mm
        return (self._clear(fit) and low < fit.bias_mm < 3 * self.half_step_mm and fit.rays >= 0.7
                and fit.rms_mm <= 0.5 * max_rms_mm and self.in_zone(fit.centre_mm))

    @staticmethod
    def _clear(fit) -> bool:
        """A fit whose outline was found at the plain edge threshold, not at the one raised over a noisy board
        (``RimFit.raised``): there a codec's blocks outline faint discs of the board's own colour
        (compressed-2mbit: one in a striking zone, level 0.026, the board around it 0.012, was taken for the
        bat, its colour learnt, and the real bat never found)."""
        return fit is not None and not fit.raised
