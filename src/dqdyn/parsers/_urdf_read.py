"""Reading a URDF document into plain records (links, joints) for `dqdyn.load_urdf`.

Only what dynamics needs is read: ``<link>`` (its ``<inertial>``) and ``<joint>`` (type,
parent, child, ``<origin>``, ``<axis>``, ``<limit>``, ``<mimic>``); ``<visual>``,
``<collision>``, ``<material>``, ``<transmission>``, ``<gazebo>``, … are skipped unread (meshes
are never opened, ``package://`` URIs never resolved).  The schema and its defaults are those of
``urdf_parser_py`` / ``urdfdom``: ``<origin>`` xyz / rpy default to zero, ``<limit>`` needs
``effort`` and ``velocity`` (``lower`` / ``upper`` default to 0), ``<inertial>`` needs
``<mass>``, ``<inertia>`` needs its six entries, the first of a repeated element is used (with a
warning).  Unknown tags inside links and joints go to the ``logging`` logger
``"dqdyn.parsers.urdf"`` at DEBUG level.  One pass over the document with ``lxml``: the time
and memory of reading are linear in its size.
"""

from __future__ import annotations

import os
import warnings
from pathlib import Path

from ..errors import URDFError
from ._urdf_xml import log, normalize_prologue

JOINT_TYPES = ("unknown", "revolute", "continuous", "prismatic", "floating", "planar", "fixed")
_ZERO3 = (0.0, 0.0, 0.0)
_INERTIA_KEYS = ("ixx", "ixy", "ixz", "iyy", "iyz", "izz")
_JOINT_KNOWN = {"origin", "axis", "parent", "child", "limit", "dynamics", "safety_controller",
                "calibration", "mimic"}
_LINK_KNOWN = {"inertial", "visual", "collision", "origin"}


class Origin:
    __slots__ = ("xyz", "rpy")

    def __init__(self, xyz=_ZERO3, rpy=_ZERO3):
        self.xyz, self.rpy = xyz, rpy


class Inertia:
    __slots__ = _INERTIA_KEYS

    def to_matrix(self):
        return [[self.ixx, self.ixy, self.ixz], [self.ixy, self.iyy, self.iyz],
                [self.ixz, self.iyz, self.izz]]


class Inertial:
    __slots__ = ("mass", "origin", "inertia")

    def __init__(self, mass, origin, inertia):
        self.mass, self.origin, self.inertia = mass, origin, inertia


class Link:
    __slots__ = ("name", "inertial")

    def __init__(self, name, inertial):
        self.name, self.inertial = name, inertial


class Limit:
    __slots__ = ("lower", "upper", "velocity", "effort")

    def __init__(self, lower, upper, velocity, effort):
        self.lower, self.upper, self.velocity, self.effort = lower, upper, velocity, effort


class Mimic:
    __slots__ = ("joint", "multiplier", "offset")

    def __init__(self, joint, multiplier, offset):
        self.joint, self.multiplier, self.offset = joint, multiplier, offset


class Joint:
    __slots__ = ("name", "type", "parent", "child", "origin", "axis", "limit", "mimic")


class Robot:
    __slots__ = ("name", "links", "joints")

    def __init__(self, name, links, joints):
        self.name, self.links, self.joints = name, links, joints


# ----------------------------------------------------------------------------------- source
def read_source(source) -> tuple[bytes, str, str]:
    """``(xml bytes, label used in messages, default robot name)`` of a path or an XML string."""
    if isinstance(source, bytes):
        if source.lstrip().startswith(b"<"):
            return source.lstrip(), "<URDF string>", "robot"
        source = source.decode()
    if isinstance(source, str) and source.lstrip().startswith("<"):
        return source.lstrip().encode("utf-8"), "<URDF string>", "robot"
    if not isinstance(source, (str, os.PathLike)):
        raise URDFError(
            f"load_urdf: expected a file path or an XML string, got {type(source).__name__}"
        )
    if not str(source).strip():
        raise URDFError("load_urdf: path_or_xml is empty; give a URDF file path or XML string")
    path = Path(source)
    label = str(path)
    if not path.exists():
        raise URDFError(f"URDF file {label!r} does not exist")
    if path.is_dir():
        raise URDFError(f"URDF path {label!r} is a directory, not a file")
    try:
        data = path.read_bytes()
    except OSError as e:
        raise URDFError(f"URDF file {label!r} cannot be read: {e.strerror or e}") from e
    return data, label, path.stem


# ----------------------------------------------------------------------------------- reading
class _Reader:
    def __init__(self, label: str):
        self.label = label
        self.repeated: list[str] = []

    def fail(self, where: str, msg: str):
        raise URDFError(f"URDF {self.label}: {where}: {msg}")

    def float(self, el, key: str, where: str, default=None):
        s = el.get(key)
        if s is None:
            if default is None:
                self.fail(where, f"Required attribute not set in XML: {key}")
            return default
        try:
            return float(s)
        except ValueError:
            self.fail(where, f"could not convert string to float: {s!r}")

    def vector(self, el, key: str, where: str, n: int = 3):
        s = el.get(key)
        if s is None:
            return None
        parts = s.split()
        try:
            v = tuple(float(x) for x in parts)
        except ValueError:
            self.fail(where, f"{key}: could not convert string to float in {s!r}")
        if len(v) != n:
            self.fail(where, f"{key} must have {n} numbers, got {s!r}")
        return v

    def children(self, el, where: str, known: set) -> dict:
        """The first child element of each tag (a repeated one noted, an unknown one logged)."""
        out: dict = {}
        for c in el:
            tag = c.tag
            if not isinstance(tag, str):
                continue
            if tag in out:
                if tag in known and tag not in ("visual", "collision"):
                    self.repeated.append(f"Scalar element defined multiple times: {tag} "
                                         f"(in {where})")
                continue
            if tag not in known:
                log.debug("URDF %s: Unknown tag \"%s\" in %s", self.label, tag, where)
            out[tag] = c
        return out

    def origin(self, el, where: str):
        if el is None:
            return None
        w = f"{where} > origin"
        xyz = self.vector(el, "xyz", w)
        rpy = self.vector(el, "rpy", w)
        return Origin(_ZERO3 if xyz is None else xyz, _ZERO3 if rpy is None else rpy)

    def link(self, el) -> Link:
        name = el.get("name")
        if name is None:
            self.fail("link", "Required attribute not set in XML: name")
        where = f"link {name!r}"
        kids = self.children(el, where, _LINK_KNOWN)
        inl = kids.get("inertial")
        inertial = None
        if inl is not None:
            w = f"{where} > inertial"
            sub = self.children(inl, w, {"origin", "mass", "inertia"})
            m = sub.get("mass")
            if m is None:
                self.fail(w, "Required element not set in XML: mass")
            mass = self.float(m, "value", f"{w} > mass")
            inertia = None
            if "inertia" in sub:
                inertia = Inertia()
                for k in _INERTIA_KEYS:
                    setattr(inertia, k, self.float(sub["inertia"], k, f"{w} > inertia"))
            inertial = Inertial(mass, self.origin(sub.get("origin"), w), inertia)
        return Link(name, inertial)

    def joint(self, el) -> Joint:
        j = Joint()
        j.name = name = el.get("name")
        if name is None:
            self.fail("joint", "Required attribute not set in XML: name")
        where = f"joint {name!r}"
        j.type = el.get("type")
        if j.type is None:
            self.fail(where, "Required attribute not set in XML: type")
        if j.type not in JOINT_TYPES:
            self.fail(where, f"Invalid joint type: {j.type}")
        kids = self.children(el, where, _JOINT_KNOWN)
        for role in ("parent", "child"):
            e = kids.get(role)
            if e is None:
                self.fail(where, f"Required element not set in XML: {role}")
            ln = e.get("link")
            if ln is None:
                self.fail(f"{where} > {role}", "Required attribute not set in XML: link")
            setattr(j, role, ln)
        j.origin = self.origin(kids.get("origin"), where)
        ax = kids.get("axis")
        j.axis = None if ax is None else self.vector(ax, "xyz", f"{where} > axis")
        if ax is not None and j.axis is None:
            self.fail(f"{where} > axis", "Required attribute not set in XML: xyz")
        lim = kids.get("limit")
        j.limit = None
        if lim is not None:
            w = f"{where} > limit"
            j.limit = Limit(self.float(lim, "lower", w, 0.0), self.float(lim, "upper", w, 0.0),
                            self.float(lim, "velocity", w), self.float(lim, "effort", w))
        mim = kids.get("mimic")
        j.mimic = None
        if mim is not None:
            w = f"{where} > mimic"
            master = mim.get("joint")
            if master is None:
                self.fail(w, "Required attribute not set in XML: joint")
            mult, off = mim.get("multiplier"), mim.get("offset")
            j.mimic = Mimic(master, None if mult is None else self.float(mim, "multiplier", w),
                            None if off is None else self.float(mim, "offset", w))
        return j


def parse(data: bytes, label: str, default_name: str) -> Robot:
    """Read the document; every failure is a `URDFError` naming ``label``."""
    from lxml import etree

    parser = etree.XMLParser(resolve_entities=False, no_network=True, remove_comments=True,
                             huge_tree=True)
    try:
        root = etree.fromstring(normalize_prologue(data, label), parser)
    except etree.XMLSyntaxError as e:
        raise URDFError(f"URDF {label}: XML syntax error: {e}") from None
    if root is None or root.tag != "robot":
        tag = None if root is None else root.tag
        raise URDFError(f"URDF {label}: the root element must be <robot>, got <{tag}>")
    r = _Reader(label)
    links, joints = [], []
    for el in root:
        tag = el.tag
        if tag == "link":
            links.append(r.link(el))
        elif tag == "joint":
            joints.append(r.joint(el))
    for m in r.repeated:
        warnings.warn(f"URDF {label}: {m} (the first one is used)", UserWarning, stacklevel=3)
    return Robot(root.get("name") or default_name, links, joints)
