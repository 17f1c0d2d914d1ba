"""Triangle meshes for the Panda3D evaluation renderer (``sim.render_panda``), built from numpy arrays.

Every shape is made in its own local frame (millimetres, z up) with per-vertex normals, colours and texture
coordinates, because the software rasteriser lights per vertex: a surface that should show a light's
fall-off is tessellated finely enough to carry it.
"""
from __future__ import annotations

import math

import numpy as np
from panda3d.core import Geom, GeomNode, GeomTriangles, GeomVertexArrayFormat, GeomVertexData, GeomVertexFormat, InternalName

__all__ = ["Mesh"]


def _format() -> GeomVertexFormat:
    """Position, normal, colour and texture coordinates, all float32, interleaved in one array."""
    arr = GeomVertexArrayFormat()
    for name, k, what in ((InternalName.get_vertex(), 3, Geom.C_point), (InternalName.get_normal(), 3, Geom.C_normal),
                          (InternalName.get_color(), 4, Geom.C_color), (InternalName.get_texcoord(), 2, Geom.C_texcoord)):
        arr.add_column(name, k, Geom.NT_float32, what)
    return GeomVertexFormat.register_format(GeomVertexFormat(arr))


def _facing(pos: np.ndarray, nrm: np.ndarray, tri: np.ndarray) -> np.ndarray:
    """The triangles wound counter-clockwise as seen from the side their vertex normals point to (the
    rasteriser culls back faces), whatever order a shape listed them in."""
    p = pos[tri]
    geo = np.cross(p[:, 1] - p[:, 0], p[:, 2] - p[:, 0])
    flip = np.einsum("ij,ij->i", geo, nrm[tri].sum(axis=1)) < 0
    tri = tri.copy()
    tri[flip] = tri[flip][:, ::-1]
    return tri


class Mesh:
    """Vertices and triangles collected shape by shape, then turned into one ``GeomNode``."""

    def __init__(self):
        self._pos: list[np.ndarray] = []
        self._nrm: list[np.ndarray] = []
        self._rgba: list[np.ndarray] = []
        self._uv: list[np.ndarray] = []
        self._tri: list[np.ndarray] = []
        self._n = 0

    def add(self, pos, nrm, rgba, uv, tri) -> "Mesh":
        pos = np.asarray(pos, np.float32).reshape(-1, 3)
        k = len(pos)
        nrm = np.asarray(nrm, np.float32).reshape(-1, 3)
        nrm = nrm / np.maximum(np.linalg.norm(nrm, axis=1, keepdims=True), 1e-9)
        rgba = np.array(np.broadcast_to(np.asarray(rgba, np.float32), (k, 4)) if np.size(rgba) == 4 else rgba, np.float32)
        uv = np.zeros((k, 2), np.float32) if uv is None else np.asarray(uv, np.float32).reshape(-1, 2)
        self._pos.append(pos)
        self._nrm.append(np.array(np.broadcast_to(nrm, (k, 3))))
        self._rgba.append(rgba.reshape(k, 4))
        self._uv.append(uv)
        self._tri.append(_facing(pos, self._nrm[-1], np.asarray(tri, np.int64).reshape(-1, 3)) + self._n)
        self._n += k
        return self

    # ------------------------------------------------------------------ shapes
    def grid(self, x0, x1, y0, y1, nx, ny, rgba=(1, 1, 1, 1), z=None, uv_rect=None) -> "Mesh":
        """A tessellated rectangle facing +z; ``z(x, y)`` (arrays) lifts its vertices (normals follow);
        ``uv_rect`` (x0, x1, y0, y1): the world rectangle the texture spans (default: this one)."""
        xs, ys = np.meshgrid(np.linspace(x0, x1, nx + 1), np.linspace(y0, y1, ny + 1))
        zs = np.zeros_like(xs) if z is None else z(xs, ys)
        gy, gx = np.gradient(zs, ys[:, 0], xs[0])
        nrm = np.dstack([-gx, -gy, np.ones_like(xs)])
        ux0, ux1, uy0, uy1 = uv_rect or (x0, x1, y0, y1)
        uv = np.dstack([(xs - ux0) / (ux1 - ux0), (ys - uy0) / (uy1 - uy0)])
        i = np.arange((ny + 1) * (nx + 1)).reshape(ny + 1, nx + 1)
        a, b, c, d = i[:-1, :-1], i[:-1, 1:], i[1:, 1:], i[1:, :-1]
        tri = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
        return self.add(np.dstack([xs, ys, zs]), nrm, rgba, uv, tri)

    def revolve(self, profile, n: int = 32, rgba=(1, 1, 1, 1), uv_scale: float = 1.0) -> "Mesh":
        """A surface of revolution about z: ``profile`` is [(r, z, nr, nz), ...] from one rim to the next
        (outward normal in the r-z plane); ``rgba`` one colour or one per profile row. Texture coordinates are
        planar (top view) over ``uv_scale`` mm."""
        prof = np.asarray(profile, float)
        a = np.linspace(0.0, 2 * math.pi, n + 1)
        ca, sa = np.cos(a)[None, :], np.sin(a)[None, :]
        r, z = prof[:, 0:1], prof[:, 1:2]
        pos = np.dstack([r * ca, r * sa, np.broadcast_to(z, (len(prof), n + 1))])
        nrm = np.dstack([prof[:, 2:3] * ca, prof[:, 2:3] * sa, np.broadcast_to(prof[:, 3:4], (len(prof), n + 1))])
        uv = 0.5 + pos[..., :2] / (2.0 * uv_scale)
        if np.size(rgba) != 4:
            rgba = np.repeat(np.asarray(rgba, np.float32).reshape(len(prof), 1, 4), n + 1, axis=1)
        i = np.arange(len(prof) * (n + 1)).reshape(len(prof), n + 1)
        a0, b0, c0, d0 = i[:-1, :-1], i[:-1, 1:], i[1:, 1:], i[1:, :-1]
        tri = np.concatenate([np.stack([a0, d0, c0], -1).reshape(-1, 3), np.stack([a0, c0, b0], -1).reshape(-1, 3)])
        return self.add(pos, nrm, np.reshape(rgba, (-1, 4)), uv, tri)

    def disc(self, r: float, z: float = 0.0, n: int = 32, rgba=(1, 1, 1, 1), up: bool = True) -> "Mesh":
        """A flat disc facing +z (or -z), as a fan."""
        a = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
        pos = np.vstack([[0.0, 0.0, z], np.column_stack([r * np.cos(a), r * np.sin(a), np.full(n, z)])])
        uv = 0.5 + pos[:, :2] / (2.0 * max(r, 1e-9))
        k = np.arange(n)
        tri = np.column_stack([np.zeros(n, int), 1 + k, 1 + (k + 1) % n])
        return self.add(pos, [[0, 0, 1 if up else -1]], rgba, uv, tri if up else tri[:, ::-1])

    def sphere(self, r: float, nu: int = 16, nv: int = 10, rgba=(1, 1, 1, 1)) -> "Mesh":
        """A UV sphere about the origin (u around z, v from the south pole)."""
        u, v = np.meshgrid(np.linspace(0, 2 * math.pi, nu + 1), np.linspace(0, math.pi, nv + 1))
        n = np.dstack([np.sin(v) * np.cos(u), np.sin(v) * np.sin(u), -np.cos(v)])
        uv = np.dstack([u / (2 * math.pi), v / math.pi])
        i = np.arange((nv + 1) * (nu + 1)).reshape(nv + 1, nu + 1)
        a, b, c, d = i[:-1, :-1], i[:-1, 1:], i[1:, 1:], i[1:, :-1]
        tri = np.concatenate([np.stack([a, b, c], -1).reshape(-1, 3), np.stack([a, c, d], -1).reshape(-1, 3)])
        return self.add(n * r, n, rgba, uv, tri)

    def rod(self, p0, p1, r0: float, r1: float, n: int = 12, rgba=(1, 1, 1, 1), caps: bool = True) -> "Mesh":
        """A tapered cylinder from ``p0`` (radius ``r0``) to ``p1`` (``r1``), with round-ish end caps."""
        p0, p1 = np.asarray(p0, float), np.asarray(p1, float)
        ax = p1 - p0
        length = float(np.linalg.norm(ax))
        w = ax / length
        e1 = np.cross(w, [0.0, 0.0, 1.0] if abs(w[2]) < 0.9 else [1.0, 0.0, 0.0])
        e1 /= np.linalg.norm(e1)
        e2 = np.cross(w, e1)
        a = np.linspace(0.0, 2 * math.pi, n + 1)
        ring = np.cos(a)[:, None] * e1 + np.sin(a)[:, None] * e2
        slope = (r0 - r1) / length
        nrm = ring + slope * w
        pos = np.concatenate([p0 + r0 * ring, p1 + r1 * ring])
        k = np.arange(n)
        tri = np.concatenate([np.column_stack([k, k + 1, n + 2 + k]), np.column_stack([k, n + 2 + k, n + 1 + k])])
        self.add(pos, np.concatenate([nrm, nrm]), rgba, None, tri)
        if caps:
            for centre, r, s in ((p0, r0, -1.0), (p1, r1, 1.0)):
                cap = np.concatenate([[centre + s * 0.6 * r * w], centre + r * ring[:-1]])
                cn = np.concatenate([[s * w], ring[:-1]])
                t = np.column_stack([np.zeros(n, int), 1 + k, 1 + (k + 1) % n])
                self.add(cap, cn, rgba, None, t if s > 0 else t[:, ::-1])
        return self

    def blob(self, r: float, alpha: float, core: float = 0.45, n: int = 24) -> "Mesh":
        """A soft dark disc (a faked shadow): ``alpha`` inside ``core * r``, fading to 0 at ``r``."""
        a = np.linspace(0.0, 2 * math.pi, n, endpoint=False)
        ring = np.column_stack([np.cos(a), np.sin(a), np.zeros(n)])
        pos = np.vstack([[0.0, 0.0, 0.0], core * r * ring, r * ring])
        rgba = np.zeros((2 * n + 1, 4))
        rgba[: n + 1, 3] = alpha
        k = np.arange(n)
        k1 = (k + 1) % n
        tri = np.concatenate([np.column_stack([np.zeros(n, int), 1 + k, 1 + k1]),
                              np.column_stack([1 + k, 1 + n + k, 1 + n + k1]), np.column_stack([1 + k, 1 + n + k1, 1 + k1])])
        return self.add(pos, [[0, 0, 1]], rgba, None, tri)

    # ------------------------------------------------------------------ out
    def node(self, name: str) -> GeomNode:
        """The mesh as one Geom. Colours are stored as their square roots: the software rasteriser applies a
        lit vertex's colour twice (as the material's diffuse and again on the lit result); unlit meshes
        here are only the black shadow blobs, which it leaves alone."""
        pos, nrm = np.concatenate(self._pos), np.concatenate(self._nrm)
        rgba, uv = np.concatenate(self._rgba).copy(), np.concatenate(self._uv)
        rgba[:, :3] = np.sqrt(np.clip(rgba[:, :3], 0.0, 1.0))
        tri = np.concatenate(self._tri).astype(np.uint32)
        vdata = GeomVertexData(name, _format(), Geom.UH_static)
        vdata.unclean_set_num_rows(len(pos))
        rows = np.concatenate([pos, nrm, rgba, uv], axis=1).astype(np.float32)
        view = memoryview(vdata.modify_array(0)).cast("B").cast("f")
        view[:] = rows.ravel()
        prim = GeomTriangles(Geom.UH_static)
        prim.set_index_type(Geom.NT_uint32)
        handle = prim.modify_vertices()
        handle.unclean_set_num_rows(tri.size)
        memoryview(handle).cast("B").cast("I")[:] = tri.ravel()
        geom = Geom(vdata)
        geom.add_primitive(prim)
        node = GeomNode(name)
        node.add_geom(geom)
        return node
