"""The 3-D scene of the Panda3D evaluation renderer: a Novuss board or a Cvrnkaná field, pieces, hands,
cues, lamps and faked soft shadows, built once per clip and posed per world state.

Geometry comes from the profile (board, cushions, pockets, zones, pit, piece sizes) and the piece heights of
``sim.render_geometry``; the look from ``sim.render_panda_look``. The pockets and the pit are real holes
(the board's texture is cut out where they are, a dark tube lies below), so a piece sinking into one is
seen going down. The rasteriser casts no shadows: each piece, hand and cue drops a soft dark blob on the
surface, away from the brightest lamp, as far as its height throws it.
"""
from __future__ import annotations

import math
import zlib

import cv2
import numpy as np
from panda3d.core import (AmbientLight, Material, NodePath, PointLight, SamplerState, Texture, TransparencyAttrib)

from .render_geometry import piece_height_mm
from .render_panda_look import Look, earth_texture, marble_texture, ring_texture, value_noise, wood_texture
from .render_panda_mesh import Mesh

__all__ = ["Scene"]

MAX_TEX = 2048  # the largest board / field texture


def _tex_size(span_mm: float, px_per_mm: float) -> int:
    """A power-of-two texture side giving about 2.5 texels per image pixel over ``span_mm`` (256..2048)."""
    return int(min(MAX_TEX, max(256, 2 ** math.ceil(math.log2(max(span_mm * px_per_mm * 2.5, 1.0))))))


def _texture(rgb: np.ndarray, alpha: np.ndarray | None = None, clamp: bool = True) -> Texture:
    """A mipmapped texture from a float RGB image whose row 0 is v = 0 (the -y edge)."""
    h, w = rgb.shape[:2]
    a = np.ones((h, w), np.float32) if alpha is None else alpha
    data = (np.clip(np.dstack([rgb, a]), 0, 1) * 255 + 0.5).astype(np.uint8)
    tex = Texture()
    tex.setup_2d_texture(w, h, Texture.T_unsigned_byte, Texture.F_rgba8)
    tex.set_ram_image_as(data.tobytes(), "RGBA")
    tex.set_minfilter(SamplerState.FT_linear_mipmap_nearest)
    tex.set_magfilter(SamplerState.FT_linear)
    if clamp:
        tex.set_wrap_u(SamplerState.WM_clamp)
        tex.set_wrap_v(SamplerState.WM_clamp)
    return tex


def _px(x_mm, y_mm, x0, y0, ppm):
    """cv2 drawing coordinates (shift 4) of board points on a texture whose pixel (0, 0) is at (x0, y0)."""
    return int(round((x_mm - x0) * ppm * 16)), int(round((y_mm - y0) * ppm * 16))


def _material(specular: float, shininess: float) -> Material:
    m = Material()
    m.set_specular((specular, specular, specular, 1.0))
    m.set_shininess(shininess)
    return m


class Scene:
    """``Scene(profile, look, seed, view_rect_mm, px_per_mm)``; ``pose(frame)`` places everything for one
    state. ``px_per_mm``: how large the camera sees the surface (sets the textures' resolution)."""

    def __init__(self, profile, look: Look, seed: int, view_rect_mm, px_per_mm: float = 0.6):
        self.profile, self.look, self.seed = profile, look, int(seed)
        self.px_per_mm = float(px_per_mm)
        self.rng = self.rng_for("scene")
        self.spec = profile.spec
        self.root = NodePath("scene")
        # drawn in the scene graph's order: Panda3D's default opaque bin sorts by render state, i.e. by where each
        # state happens to lie in memory, and where two surfaces meet at one depth the first drawn shows; the
        # same clip then looked different after other clips had been rendered in the process
        self.root.set_bin("fixed", 0)
        self._lights(look)
        self.surface_z = 0.0
        if self.spec.walls:
            self._board()
        else:
            self._field(view_rect_mm)
        self._templates = self._piece_templates()
        self.pieces: dict[str, NodePath] = {}
        self.shadows: dict[str, NodePath] = {}
        self._occ: dict[str, list[NodePath]] = {"hand": [], "cue": []}
        self._occ_shadow: list[NodePath] = []
        self._occ_key: tuple = ()

    def rng_for(self, name: str) -> np.random.Generator:
        """A generator of its own for each named thing, so what a piece looks like does not depend on the
        order things first appeared in."""
        return np.random.default_rng([self.seed, 0x5CE7, zlib.crc32(name.encode())])

    # ------------------------------------------------------------------ lamps
    def _lights(self, look: Look) -> None:
        amb = AmbientLight("ambient")
        amb.set_color((*look.ambient, 1.0))
        self.root.set_light(self.root.attach_new_node(amb))
        brightest = max(look.lights, key=lambda lamp: sum(lamp[1]))
        self.lamp_mm = np.asarray(brightest[0], float)
        for i, (pos, rgb) in enumerate(look.lights):
            d2 = float(np.dot(pos, pos))
            fall = self.rng.uniform(0.3, 1.2)  # how much brighter under the lamp than at the board's centre
            q = fall / d2
            lamp = PointLight(f"lamp{i}")
            scale = 1.0 + fall  # at the board centre the lamp gives rgb
            lamp.set_color((rgb[0] * scale, rgb[1] * scale, rgb[2] * scale, 1.0))
            lamp.set_specular_color((rgb[0] * scale, rgb[1] * scale, rgb[2] * scale, 1.0))
            lamp.set_attenuation((1.0, 0.0, q))
            np_ = self.root.attach_new_node(lamp)
            np_.set_pos(*pos)
            self.root.set_light(np_)

    # ------------------------------------------------------------------ Novuss
    def _board(self) -> None:
        g, look, rng = self.profile.geometry, self.look, self.rng
        h, cw, fr, pr = self.spec.half_mm, g["cushion_width_mm"], g["frame_mm"] / 2.0, g["pocket_radius_mm"]
        size = _tex_size(2 * fr, self.px_per_mm)
        ppm = size / (2 * fr)
        img = wood_texture(rng, size, look.surface, look.grain, 2 * fr)
        frame = wood_texture(rng, size, look.frame, look.grain * 1.5, 2 * fr)
        yy, xx = (np.mgrid[0:size, 0:size] + 0.5) / ppm - fr
        outer = np.maximum(np.abs(xx), np.abs(yy))
        img = np.where((outer > h)[..., None], frame, img)
        cush = (outer > h) & (outer <= h + cw)
        img[cush] = np.asarray(look.cushion, np.float32) * (1 + 0.04 * value_noise(rng, (size, size), 40, 1)[cush, None])
        self._markings(img, -fr, ppm)
        alpha = np.ones((size, size), np.float32)
        for cx, cy in self.spec.pockets_mm.values():
            cv2.circle(alpha, _px(cx, cy, -fr, -fr, ppm), int(pr * ppm * 16), 0.0, -1, cv2.LINE_8, 4)
        tex = _texture(img, alpha)
        ch = look.cushion_mm
        mat = _material(look.specular, 30.0)
        surface = Mesh().grid(-h, h, -h, h, 48, 48, uv_rect=(-fr, fr, -fr, fr))
        rim = Mesh()
        for x0, x1, y0, y1 in ((-fr, fr, -fr, -h), (-fr, fr, h, fr), (-fr, -h, -h, h), (h, fr, -h, h)):
            rim.grid(x0, x1, y0, y1, max(2, int((x1 - x0) / 40)), max(2, int((y1 - y0) / 40)), uv_rect=(-fr, fr, -fr, fr),
                     z=lambda xs, ys: np.full_like(xs, ch))
        for node in (surface, rim):
            np_ = self.root.attach_new_node(node.node("board"))
            np_.set_texture(tex)
            np_.set_transparency(TransparencyAttrib.M_binary)
            np_.set_material(mat)
        walls = Mesh()
        for k in range(4):  # the cushions' inner faces between the pockets, the frame's outer faces: the south
            ca, sa = round(math.cos(k * math.pi / 2)), round(math.sin(k * math.pi / 2))  # side turned k quarters
            for y, (xa, xb), (z0, z1), ny, rgb in ((-h, (-h + pr, h - pr), (0.0, ch), 1.0, look.cushion),
                                                   (-fr, (-fr, fr), (-60.0, ch), -1.0, look.frame)):
                local = np.array([[xa, y, z0], [xb, y, z0], [xb, y, z1], [xa, y, z1]])
                pts = np.column_stack([local[:, 0] * ca - local[:, 1] * sa, local[:, 0] * sa + local[:, 1] * ca, local[:, 2]])
                walls.add(pts, [[-ny * sa, ny * ca, 0.0]], (*rgb, 1.0), None, [[0, 1, 2], [0, 2, 3]])
        self.root.attach_new_node(walls.node("walls")).set_material(mat)
        for cx, cy in self.spec.pockets_mm.values():
            self._hole(cx, cy, pr, 70.0, ch, (0.03, 0.03, 0.035), inner_quadrant=(-np.sign(cx), -np.sign(cy)))
        floor = Mesh().grid(-3000, 3000, -3000, 3000, 12, 12, rgba=(*look.floor, 1.0), z=lambda xs, ys: np.full_like(xs, -760.0))
        self.root.attach_new_node(floor.node("floor")).set_material(_material(0.0, 1.0))

    def _markings(self, img: np.ndarray, x0: float, ppm: float) -> None:
        """Striking zones along all four cushions, the centre circle and the corner-joint diagonals."""
        g, spec = self.profile.geometry, self.spec
        lw = g["line_width_mm"]
        col = tuple(float(c) for c in self.look.line)
        t = max(1, int(round(lw * ppm)))
        x_lo, x_hi, y_lo, y_hi = spec.zone_rect("A")
        for k in range(4):  # the A zone turned about the centre: a real board marks a zone on every side
            ca, sa = round(math.cos(k * math.pi / 2)), round(math.sin(k * math.pi / 2))
            turn = lambda x, y: (x * ca - y * sa, x * sa + y * ca)  # noqa: E731
            for a, b in (((x_lo, y_hi), (x_hi, y_hi)), ((x_lo, y_lo), (x_lo, y_hi)), ((x_hi, y_lo), (x_hi, y_hi))):
                cv2.line(img, _px(*turn(*a), x0, x0, ppm), _px(*turn(*b), x0, x0, ppm), col, t, cv2.LINE_AA, 4)
        cv2.circle(img, _px(0, 0, x0, x0, ppm), int(g["circle_radius_mm"] * ppm * 16), col, t, cv2.LINE_AA, 4)
        for cx, cy in spec.pockets_mm.values():
            d = -np.array([cx, cy]) / math.hypot(cx, cy)
            a, b = np.array([cx, cy]) + d * g["pocket_radius_mm"], np.array([cx, cy]) + d * g["corner_joint_mm"]
            cv2.line(img, _px(*a, x0, x0, ppm), _px(*b, x0, x0, ppm), col, t, cv2.LINE_AA, 4)

    def _hole(self, cx, cy, r, depth, rim_z, rgb, inner_quadrant=None) -> None:
        """A round hole at (cx, cy): a tube darkening downwards and a bottom; above z = 0, the wall only
        where the rim (not the playing surface) surrounds it."""
        m = Mesh()
        zs = np.linspace(0.0, -depth, 6)
        shade = np.linspace(1.0, 0.25, 6)
        col = np.asarray(rgb)
        m.revolve([(r, z, -1, 0) for z in zs], 40, [(*(col * s), 1.0) for s in shade])
        m.disc(r, -depth, 40, (*(col * 0.2), 1.0))
        if rim_z > 0 and inner_quadrant is not None:
            a0 = math.atan2(inner_quadrant[1], inner_quadrant[0]) + math.pi / 4
            ang = np.linspace(a0, a0 + 1.5 * math.pi, 31)
            ring = np.column_stack([np.cos(ang), np.sin(ang)])
            pos = np.vstack([np.column_stack([r * ring, np.full(31, rim_z)]), np.column_stack([r * ring, np.zeros(31)])])
            nrm = np.vstack([np.column_stack([-ring, np.zeros(31)])] * 2)
            k = np.arange(30)
            m.add(pos, nrm, (*(col * 1.5), 1.0), None, np.concatenate([np.column_stack([k, k + 1, 32 + k]), np.column_stack([k, 32 + k, 31 + k])]))
        hole = self.root.attach_new_node(m.node("hole"))
        hole.set_pos(cx, cy, 0.0)

    # ------------------------------------------------------------------ Cvrnkaná
    def _field(self, rect) -> None:
        g, look, rng = self.profile.geometry, self.look, self.rng
        x0, x1, y0, y1 = rect
        w = _tex_size(x1 - x0, self.px_per_mm)
        ppm = w / (x1 - x0)
        hgt = 2 ** int(math.ceil(math.log2((y1 - y0) * ppm)))  # power-of-two sides, as the rasteriser wants
        y0, y1 = (y0 + y1 - hgt / ppm) / 2.0, (y0 + y1 + hgt / ppm) / 2.0  # square texels: the field grows in y
        img = earth_texture(rng, (hgt, w), look.soil, look.soil_kind, 1.0 / ppm)
        pr = self.spec.pit_radius_mm
        dark = np.zeros((hgt, w), np.float32)
        cv2.circle(dark, _px(0, 0, x0, y0, ppm), int((pr + 12) * ppm * 16), 1.0, -1, cv2.LINE_AA, 4)
        dark = cv2.GaussianBlur(dark, (0, 0), 6 * ppm)
        img = img * (1 - 0.25 * dark[..., None])  # the trodden, damp ring round the pit
        for (ax, ay), (bx, by) in self.spec.start_lines_mm():
            cv2.line(img, _px(ax, ay, x0, y0, ppm), _px(bx, by, x0, y0, ppm), (0.85, 0.85, 0.8), max(1, int(15 * ppm)), cv2.LINE_AA, 4)
        alpha = np.ones((hgt, w), np.float32)
        cv2.circle(alpha, _px(0, 0, x0, y0, ppm), int(pr * ppm * 16), 0.0, -1, cv2.LINE_8, 4)
        ground = Mesh().grid(x0, x1, y0, y1, 64, 40)
        tilt = 0.06 * np.stack([value_noise(rng, (41, 65), 4, 2).ravel() for _ in range(2)], 1)
        ground._nrm[0][:, :2] += tilt  # an uneven, trodden field: the lamps light it in patches
        node = self.root.attach_new_node(ground.node("ground"))
        node.set_texture(_texture(img, alpha))
        node.set_transparency(TransparencyAttrib.M_binary)
        node.set_material(_material(look.specular * 0.2, 8.0))
        self._hole(0.0, 0.0, pr, g["pit_depth_mm"], 0.0, np.asarray(look.soil) * 0.7)

    # ------------------------------------------------------------------ pieces
    def _piece_templates(self) -> dict:
        """(kind, owner) -> (colour, grain texture (grey: the colour comes from each piece's colour
        scale), hole radius) for every piece class of the game; a marble's texture is its own."""
        look, g, rng = self.look, self.profile.geometry, self.rng
        out = {}
        for kind in self.spec.kinds:
            owners = (None,) if kind == self.spec.striker else ("A", "B")
            for who in owners:
                rgb = look.bat if who is None else (look.marble if kind == "marble" else look.pawn)[who]
                if kind == "marble":
                    out[(kind, who)] = (rgb, None)
                else:
                    hole = g.get(f"{kind}_hole_mm", 0.0) / 2.0
                    out[(kind, who)] = (rgb, _texture(ring_texture(rng, 128, (1.0, 1.0, 1.0), look.grain * 1.2), clamp=False), hole)
        return out

    def _disc_node(self, kind: str, who, jitter: float) -> NodePath:
        rgb, tex, hole = self._templates[(kind, who)]
        r = self.spec.piece_radii_mm[kind]
        h = piece_height_mm(self.profile, kind)
        c = min(1.2, 0.15 * h)
        col = (*np.clip(np.asarray(rgb) * jitter, 0, 1), 1.0)
        m = Mesh()
        m.revolve([(hole, h, 0, 1), (r - c, h, 0, 1)], 36, (1, 1, 1, 1), r)
        m.revolve([(r - c, h, 0.7, 0.7), (r, h - c, 0.7, 0.7)], 36, (1, 1, 1, 1), r)
        m.revolve([(r, h - c, 1, 0), (r, 0.0, 1, 0)], 36, (0.85, 0.85, 0.85, 1), r)
        if hole > 0:
            m.revolve([(hole, 0.0, -1, 0), (hole, h, -1, 0)], 16, (0.6, 0.6, 0.6, 1), r)
        np_ = NodePath(m.node(kind))
        np_.set_texture(tex)
        np_.set_python_tag("colour", col)
        np_.set_material(_material(self.look.specular * 1.5, 25.0))
        return np_

    def _marble_node(self, rng, who, jitter: float, vanes: bool) -> NodePath:
        rgb = np.clip(np.asarray(self._templates[("marble", who)][0]) * jitter, 0, 1)
        r = self.spec.piece_radii_mm["marble"]
        np_ = NodePath(Mesh().sphere(r, 18, 12).node("marble"))
        np_.set_python_tag("colour", (1.0, 1.0, 1.0, 1.0))
        np_.set_texture(_texture(marble_texture(rng, tuple(rgb), vanes), clamp=False))
        np_.set_material(_material(0.9, 80.0))
        return np_

    def _piece(self, p) -> tuple[NodePath, NodePath]:
        if p.id not in self.pieces:
            rng = self.rng_for(p.id)
            jitter = rng.uniform(0.94, 1.06)
            node = self._marble_node(rng, p.owner, jitter, rng.random() < self.look.marble_vanes) if p.kind == "marble" \
                else self._disc_node(p.kind, p.owner, jitter)
            node.reparent_to(self.root)
            node.hide()
            self.pieces[p.id] = node
            self.shadows[p.id] = self._blob_node()
            self.shadows[p.id].hide()
        return self.pieces[p.id], self.shadows[p.id]

    def _blob_node(self) -> NodePath:
        np_ = self.root.attach_new_node(Mesh().blob(1.0, self.look.shadow).node("shadow"))
        np_.set_light_off()
        np_.set_transparency(TransparencyAttrib.M_alpha)
        np_.set_depth_write(False)
        np_.set_bin("fixed", 10)
        return np_

    def _shadow(self, blob: NodePath, x, y, z_top, r, half_len: float | None = None, heading: float = 0.0) -> None:
        """Place a soft shadow for something of radius ``r`` (or an elongated one, ``half_len`` along
        ``heading`` degrees) whose middle is ``z_top`` over (x, y): the higher, the larger and fainter."""
        lx, ly, lz = self.lamp_mm
        if z_top >= lz - 50:
            blob.hide()
            return
        k = z_top / (lz - z_top)
        sx, sy = x + (x - lx) * k, y + (y - ly) * k
        floor = self._floor_z(sx, sy)
        if floor is None:
            blob.hide()
            return
        grow = 0.15 + 0.02 * z_top  # the penumbra, relative to r
        blob.show()
        blob.set_pos(sx, sy, floor + 0.4)
        blob.set_h(heading)
        blob.set_scale((r if half_len is None else half_len) + grow * r, r * (1.0 + grow), 1.0)
        blob.set_alpha_scale(1.0 / (1.0 + 0.02 * z_top))

    def _floor_z(self, x, y):
        """Height of what a shadow falls on at (x, y): the surface, the cushions, or None over a hole."""
        spec = self.spec
        if spec.has_pit and math.hypot(x, y) < spec.pit_radius_mm:
            return None
        for cx, cy in spec.pockets_mm.values():
            if math.hypot(x - cx, y - cy) < spec.pocket_radius_mm:
                return None
        if spec.walls and max(abs(x), abs(y)) > spec.half_mm:
            return self.look.cushion_mm
        return 0.0

    # ------------------------------------------------------------------ occluders
    def _hand_node(self) -> NodePath:
        """A unit hand (palm radius 1) reaching along +x, the forearm rising back along -x."""
        look = self.look
        skin, sleeve = (*look.skin, 1.0), (*look.sleeve, 1.0)
        m = Mesh()
        palm = Mesh().sphere(1.0, 14, 8, skin)
        palm._pos[0] = palm._pos[0] * np.array([1.0, 0.85, 0.32], np.float32)
        palm._nrm[0] = palm._nrm[0] / np.array([1.0, 0.85, 0.32], np.float32)
        m.add(palm._pos[0], palm._nrm[0], skin, None, palm._tri[0])
        for k, dy in enumerate((-0.55, -0.2, 0.15, 0.5)):
            m.rod((0.75, dy, 0.0), (1.55 + 0.15 * (k in (1, 2)), dy * 1.1, -0.12), 0.16, 0.13, 8, skin)
        m.rod((0.1, 0.75, 0.0), (0.75, 1.25, -0.05), 0.18, 0.14, 8, skin)
        rise = math.radians(25.0)
        wrist, elbow = np.array([-0.9, 0.0, 0.1]), np.array([-0.9 - 9.0 * math.cos(rise), 0.0, 0.1 + 9.0 * math.sin(rise)])
        m.rod(wrist, wrist + (elbow - wrist) * 0.45, 0.55, 0.65, 12, skin)
        m.rod(wrist + (elbow - wrist) * 0.45, elbow + (elbow - wrist) * 1.5, 0.85, 1.0, 12, sleeve)
        np_ = NodePath(m.node("hand"))
        np_.set_material(_material(0.1, 10.0))
        return np_

    def _cue_node(self, length: float, width: float) -> NodePath:
        """A cue of ``length`` whose tip is at the origin, pointing +x, the butt raised slightly."""
        tilt = math.radians(self.rng_for(f"cue {length:.0f}").uniform(2.0, 6.0))
        butt = np.array([-length * math.cos(tilt), 0.0, length * math.sin(tilt)])
        r = width / 2.0
        m = Mesh()
        m.rod((0.0, 0.0, 0.0), butt * 0.03, r, r * 1.02, 10, (0.92, 0.9, 0.85, 1.0))
        m.rod(butt * 0.03, butt * 0.7, r * 1.02, r * 1.4, 10, (*self.look.cue, 1.0))
        m.rod(butt * 0.7, butt, r * 1.4, r * 1.7, 10, (*(np.asarray(self.look.cue) * 0.35), 1.0))
        np_ = NodePath(m.node("cue"))
        np_.set_material(_material(0.5, 40.0))
        return np_

    def _occluder(self, o, i: int):
        """The ``i``-th node of kind ``o.kind`` posed as ``o``, and its shadow's (centre, height, half
        length, half width) on the surface."""
        pool = self._occ.setdefault(o.kind, [])
        if o.kind == "cue":
            length, width = o.length_mm or 1200.0, o.width_mm or 12.0
            key = (round(length), round(width, 1))
            if len(pool) > i and pool[i].get_python_tag("key") != key:  # another cue: made anew
                pool.pop(i).remove_node()
            if len(pool) <= i:
                pool.insert(i, self._cue_node(length, width))
                pool[i].set_python_tag("key", key)
                pool[i].reparent_to(self.root)
            node = pool[i]
            node.set_pos(o.x_mm, o.y_mm, o.z_mm + width / 2.0)
            back, half_len, half_w, mid = length / 2.0, length / 2.0, width * 0.8, o.z_mm + 20.0
        else:
            if len(pool) <= i:
                pool.append(self._hand_node())
                pool[-1].reparent_to(self.root)
            node, r = pool[i], o.radius_mm or 45.0
            node.set_pos(o.x_mm, o.y_mm, o.z_mm + 0.32 * r)
            node.set_scale(r)
            back, half_len, half_w, mid = 0.3 * r, 1.7 * r, 1.1 * r, o.z_mm + 0.32 * r
        node.set_h(math.degrees(o.direction_rad))
        node.show()
        centre = (o.x_mm - back * math.cos(o.direction_rad), o.y_mm - back * math.sin(o.direction_rad))
        return node, (centre, mid, half_len, half_w)

    def _pose_occluders(self, occluders) -> None:
        count: dict[str, int] = {}
        shown = set()
        for k, o in enumerate(occluders):
            node, (centre, mid, half_len, half_w) = self._occluder(o, count.get(o.kind, 0))
            count[o.kind] = count.get(o.kind, 0) + 1
            shown.add(id(node))
            if k >= len(self._occ_shadow):
                self._occ_shadow.append(self._blob_node())
            self._shadow(self._occ_shadow[k], *centre, mid, half_w, half_len, math.degrees(o.direction_rad))
        for pool in self._occ.values():
            for node in pool:
                if id(node) not in shown:
                    node.hide()
        for blob in self._occ_shadow[len(occluders):]:
            blob.hide()

    # ------------------------------------------------------------------ one state
    def _corners(self, nodes) -> list[np.ndarray]:
        """The corners (8, 3) of the bounding boxes of the shown ``nodes``, in board mm."""
        out = []
        for node in nodes:
            if node.is_hidden():
                continue
            lo, hi = node.get_tight_bounds(self.root)
            out.append(np.array([[x, y, z] for x in (lo[0], hi[0]) for y in (lo[1], hi[1]) for z in (lo[2], hi[2])]))
        return out

    def pose(self, frame) -> np.ndarray:
        """Everything where ``frame`` (a ``sim.frames.SimFrame``) has it. Returns the corners (N, 3) of the
        boxes around everything that moved, appeared or went, where it was and where it is now: the only
        part of the picture that can have changed since the last ``pose``."""
        changed: list[np.ndarray] = []
        seen = set()
        for p in frame.pieces:
            node, blob = self._piece(p)
            seen.add(p.id)
            key = (p.visible, p.x_mm, p.y_mm, p.z_mm, p.angle_rad)
            if node.get_python_tag("key") == key:
                continue
            changed += self._corners((node, blob))
            node.set_python_tag("key", key)
            self._pose_piece(p, node, blob)
            changed += self._corners((node, blob))
        for pid, node in self.pieces.items():
            if pid not in seen and node.get_python_tag("key") is not None:
                changed += self._corners((node, self.shadows[pid]))
                node.set_python_tag("key", None)
                node.hide()
                self.shadows[pid].hide()
        if frame.occluders != self._occ_key:
            nodes = [n for pool in self._occ.values() for n in pool] + self._occ_shadow
            changed += self._corners(nodes)
            self._pose_occluders(frame.occluders)
            self._occ_key = frame.occluders
            nodes = [n for pool in self._occ.values() for n in pool] + self._occ_shadow
            changed += self._corners(nodes)
        return np.concatenate(changed) if changed else np.zeros((0, 3))

    def _pose_piece(self, p, node: NodePath, blob: NodePath) -> None:
        if not p.visible:
            node.hide()
            blob.hide()
            return
        node.show()
        if p.kind == "marble":
            r = p.radius_mm
            node.set_pos(p.x_mm, p.y_mm, r + p.z_mm)
            node.set_hpr(math.degrees(p.angle_rad), 0.0, math.degrees(p.angle_rad) * 0.7)
            z_mid = r + p.z_mm
        else:
            node.set_pos(p.x_mm, p.y_mm, p.z_mm)
            node.set_h(math.degrees(p.angle_rad))
            z_mid = p.z_mm + piece_height_mm(self.profile, p.kind) * 0.5
        depth = self.profile.geometry.get("pit_depth_mm", 70.0)
        dim = float(np.clip(1.0 + 0.85 * p.z_mm / depth, 0.15, 1.0))  # down a hole, little light reaches it
        node.set_color_scale(*(np.asarray(node.get_python_tag("colour")[:3]) * dim), 1.0)
        if p.z_mm < -1.0:
            blob.hide()
        else:
            self._shadow(blob, p.x_mm, p.y_mm, max(z_mid, 0.0), p.radius_mm)
